//===- CpuJit.cpp - a layer's function compiled for the host CPU ----------===//
#include "ssd/CpuJit/CpuJit.h"
#include "ssd/CpuJit/KernelMemory.h"

#include "ssd/Conversion/Pipelines.h"
#include "ssd/InitAllDialects.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/thread.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <dlfcn.h>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

using namespace mlir;

namespace {
/// The stack of the thread that runs compiled code: the address space is
/// reserved, not committed, so a generous size costs nothing.
constexpr unsigned kKernelStackSize = 1u << 30;

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// One of MLIR's runtime libraries, opened once per process with
/// RTLD_LOCAL. The ExecutionEngine's own loading (sharedLibPaths) opens them
/// RTLD_GLOBAL, which puts their dependencies, the system's libLLVM and
/// libMLIR, into the global scope; a library loaded later with its own LLVM
/// inside (Triton's) then binds to those and crashes. So the project opens
/// them privately and hands the JIT their symbols itself.
struct RuntimeLibrary {
  void *handle = nullptr;
  /// What the library registers through __mlir_execution_engine_init (the
  /// async runtime), beside its plain exported symbols.
  llvm::StringMap<void *> registered;
};

llvm::Expected<const RuntimeLibrary *> openRuntimeLibrary(const char *path) {
  static std::mutex mutex;
  static llvm::StringMap<RuntimeLibrary> opened;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = opened.find(path);
  if (found != opened.end())
    return &found->second;
  RuntimeLibrary library;
  library.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library.handle)
    return error(llvm::Twine("cannot load ") + path + ": " + dlerror());
  using InitFn = void (*)(llvm::StringMap<void *> &);
  if (auto init = reinterpret_cast<InitFn>(
          dlsym(library.handle, "__mlir_execution_engine_init")))
    init(library.registered);
  return &opened.try_emplace(path, std::move(library)).first->second;
}

/// The address of `name` in `libraries`, or null.
void *lookupSymbol(llvm::ArrayRef<const RuntimeLibrary *> libraries,
                   llvm::StringRef name) {
  for (const RuntimeLibrary *library : libraries) {
    auto registered = library->registered.find(name);
    if (registered != library->registered.end())
      return registered->second;
    if (void *address = dlsym(library->handle, name.str().c_str()))
      return address;
  }
  return nullptr;
}

/// The async runtime's functions that drainAsyncWorkers calls; set once a
/// layer compiled with threads has loaded the runtime.
struct AsyncRuntimeEntries {
  void (*execute)(void *handle, void (*resume)(void *));
  int64_t (*numWorkers)();
};
std::atomic<const AsyncRuntimeEntries *> asyncRuntime{nullptr};

void noteAsyncRuntime(const RuntimeLibrary *library) {
  static const AsyncRuntimeEntries entries = {
      reinterpret_cast<void (*)(void *, void (*)(void *))>(
          lookupSymbol(library, "mlirAsyncRuntimeExecute")),
      // Upstream's spelling.
      reinterpret_cast<int64_t (*)()>(
          lookupSymbol(library, "mlirAsyncRuntimGetNumWorkerThreads"))};
  if (entries.execute && entries.numWorkers)
    asyncRuntime.store(&entries);
}

/// Returns once no worker of MLIR's async runtime is still inside a task it
/// took before the call. The worker that ends a compiled call's last task
/// wakes the caller and only then leaves the coroutine's compiled code: an
/// engine destroyed right after the call was freed under it (ssd-run's rare
/// SIGSEGV with no output). The runtime offers no wait but
/// __mlir_execution_engine_destroy, which ends it for the rest of the process,
/// so each worker takes one task of a barrier that lets none go before all
/// arrived (the pool starts a thread per queued task up to numWorkers). Tasks
/// of compiled calls never wait on other tasks, so none is starved by it.
void drainAsyncWorkers() {
  const AsyncRuntimeEntries *runtime = asyncRuntime.load();
  if (!runtime)
    return;
  // Two barriers at once could each hold workers that the other waits for.
  static std::mutex oneAtATime;
  std::lock_guard<std::mutex> serial(oneAtATime);
  struct Barrier {
    std::mutex mutex;
    std::condition_variable changed;
    int64_t size = 0, arrived = 0, left = 0;
  } barrier;
  barrier.size = std::max<int64_t>(runtime->numWorkers(), 1);
  auto task = [](void *opaque) {
    Barrier &b = *static_cast<Barrier *>(opaque);
    std::unique_lock<std::mutex> lock(b.mutex);
    ++b.arrived;
    b.changed.notify_all();
    b.changed.wait(lock, [&] { return b.arrived == b.size; });
    ++b.left;
    b.changed.notify_all();
  };
  for (int64_t i = 0; i < barrier.size; ++i)
    runtime->execute(&barrier, task);
  // The last task notifies under the lock: the barrier outlives its use.
  std::unique_lock<std::mutex> lock(barrier.mutex);
  barrier.changed.wait(lock, [&] { return barrier.left == barrier.size; });
}
} // namespace

DialectRegistry ssd::cpuJitRegistry() {
  DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  ssd::registerAllDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  return registry;
}

LogicalResult ssd::lowerForCpu(ModuleOp module, int32_t threads,
                               int64_t segmentChunks) {
  PassManager pm(module.getContext());
  CPUPipelineOptions options;
  options.parallel = threads > 0;
  options.threads = threads;
  options.segmentChunks = segmentChunks;
  buildCPUPipeline(pm, options);
  return pm.run(module);
}

llvm::Expected<std::unique_ptr<ExecutionEngine>>
ssd::compileForCpu(ModuleOp lowered, int32_t threads) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // ExecutionEngineOptions::transformer is a function_ref: keep the function.
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                /*targetMachine=*/nullptr);
  ExecutionEngineOptions options;
  options.transformer = optimize;
  // MLIR's runtime helpers (memrefCopy for non-contiguous copies, ...).
  SmallVector<const RuntimeLibrary *> libraries;
  auto open = [&](const char *path) -> llvm::Error {
    llvm::Expected<const RuntimeLibrary *> library = openRuntimeLibrary(path);
    if (!library)
      return library.takeError();
    libraries.push_back(*library);
    return llvm::Error::success();
  };
#ifdef SSD_MLIR_C_RUNNER_UTILS
  if (llvm::sys::fs::exists(SSD_MLIR_C_RUNNER_UTILS))
    if (llvm::Error err = open(SSD_MLIR_C_RUNNER_UTILS))
      return std::move(err);
#endif
  if (threads > 0) {
#ifdef SSD_MLIR_ASYNC_RUNTIME
    if (!llvm::sys::fs::exists(SSD_MLIR_ASYNC_RUNTIME))
      return error("threads > 0 needs " SSD_MLIR_ASYNC_RUNTIME);
    if (llvm::Error err = open(SSD_MLIR_ASYNC_RUNTIME))
      return std::move(err);
    noteAsyncRuntime(libraries.back());
#else
    return error("threads > 0: MLIR's async runtime library was not found "
                 "when the project was built");
#endif
  }
  // The functions the module declares but does not define, and the float
  // conversions LLVM's code generator calls for bf16 (the C runner
  // utilities' dependency libmlir_float16_utils defines them), found in
  // those libraries; the rest (libc's, libgcc's) the JIT finds in the
  // process.
  llvm::SmallVector<std::string> wanted = {"__truncsfbf2", "__truncdfbf2"};
  lowered.walk([&](LLVM::LLVMFuncOp func) {
    if (func.isExternal())
      wanted.push_back(func.getName().str());
  });
  // The kernels' heap keeps their temporaries between calls (KernelMemory.h):
  // its malloc family, never the one the libraries would resolve.
  llvm::SmallVector<std::pair<std::string, void *>> symbols;
  llvm::StringSet<> heap;
  for (auto [name, address] : kernel_memory::symbols()) {
    symbols.emplace_back(name, address);
    heap.insert(name);
  }
  for (const std::string &name : wanted)
    if (!heap.contains(name))
      if (void *address = lookupSymbol(libraries, name))
        symbols.emplace_back(name, address);
  llvm::Expected<std::unique_ptr<ExecutionEngine>> engine =
      ExecutionEngine::create(lowered, options);
  if (!engine)
    return error("JIT compilation failed: " +
                 llvm::toString(engine.takeError()));
  (*engine)->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (const auto &[name, address] : symbols)
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                             llvm::JITSymbolFlags::Exported};
    return map;
  });
  return std::move(*engine);
}

void ssd::runOnKernelStack(llvm::function_ref<void()> body) {
  llvm::thread worker(std::optional<unsigned>(kKernelStackSize),
                      [&] { body(); });
  worker.join();
  drainAsyncWorkers();
}
