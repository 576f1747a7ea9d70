// RUN: ssd-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(gpu.module(ssd-tma-descriptors-by-value))' | FileCheck %s

// The named positions become 128-byte grid-constant parameters, 64-byte
// aligned; the other arguments and kernels are left as they are, and the
// marking attributes go away.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.func @copies(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-NOT: ssd.tma_descriptors
// CHECK-NOT: ssd.lowered_arg_count
// CHECK: llvm.func @plain(%{{.*}}: !llvm.ptr)
// CHECK-NOT: llvm.byval
gpu.module @kernels {
  llvm.func @copies(%a: !llvm.ptr, %n: i64, %x: !llvm.ptr, %b: !llvm.ptr)
      attributes {nvvm.kernel, ssd.lowered_arg_count = 4 : i64,
                  ssd.tma_descriptors = array<i64: 2, 3>} {
    llvm.return
  }
  llvm.func @plain(%a: !llvm.ptr) attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @below {{kernel 'k' has 3 lowered arguments, ssd.lowered_arg_count says 4 (the TMA descriptor positions were counted for memref arguments as expanded descriptors)}}
  llvm.func @k(%a: !llvm.ptr, %n: i64, %x: !llvm.ptr)
      attributes {ssd.lowered_arg_count = 4 : i64, ssd.tma_descriptors = array<i64: 2>} {
    llvm.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @below {{TMA descriptor position 1 of kernel 'k' is 'i64', expected !llvm.ptr}}
  llvm.func @k(%a: !llvm.ptr, %n: i64, %x: !llvm.ptr)
      attributes {ssd.lowered_arg_count = 3 : i64, ssd.tma_descriptors = array<i64: 1>} {
    llvm.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @below {{TMA descriptor position 1 of kernel 'k' is '!llvm.ptr<1>', expected !llvm.ptr}}
  llvm.func @k(%a: !llvm.ptr, %x: !llvm.ptr<1>)
      attributes {ssd.lowered_arg_count = 2 : i64, ssd.tma_descriptors = array<i64: 1>} {
    llvm.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @below {{TMA descriptor position 3 is outside the 3 arguments of kernel 'k'}}
  llvm.func @k(%a: !llvm.ptr, %n: i64, %x: !llvm.ptr)
      attributes {ssd.lowered_arg_count = 3 : i64, ssd.tma_descriptors = array<i64: 3>} {
    llvm.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @below {{'ssd.tma_descriptors' and 'ssd.lowered_arg_count' must be given together}}
  llvm.func @k(%a: !llvm.ptr) attributes {ssd.tma_descriptors = array<i64: 0>} {
    llvm.return
  }
}
