//===- Cluster.cpp - thread block clusters: ranks, barriers, peers --------===//
#include "Cluster.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;

namespace ssd {
namespace gpu_lowering {

Value clusterRank(Emitter &e) {
  Value rank = NVVM::ClusterId::create(e.b, e.b.getI32Type()).getResult();
  return e.toIndex(rank);
}

void clusterBarrier(Emitter &e, bool release) {
  UnitAttr aligned = e.b.getUnitAttr();
  if (release)
    NVVM::ClusterArriveOp::create(e.b, aligned);
  else
    NVVM::ClusterArriveRelaxedOp::create(e.b, aligned);
  NVVM::ClusterWaitOp::create(e.b, aligned);
}

Value peerPointer(Emitter &e, Value ptr, Value rank) {
  Value rank32 = arith::IndexCastOp::create(e.b, e.b.getI32Type(), rank);
  auto clusterPtr = LLVM::LLVMPointerType::get(e.b.getContext(), 7);
  return NVVM::MapaOp::create(e.b, clusterPtr, ptr, rank32);
}

void arriveOnClusterBarrier(Emitter &e, Value bar) {
  NVVM::MBarrierArriveOp::create(e.b, /*res=*/Type(), bar, /*count=*/Value(),
                                 NVVM::MemScopeKind::CTA,
                                 /*relaxed=*/false);
}

void fenceBarrierInit(Emitter &e) { NVVM::FenceMbarrierInitOp::create(e.b); }

} // namespace gpu_lowering
} // namespace ssd
