# -*- Python -*-
# lit configuration of the SSD-MLIR regression suite.

import glob
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "SSD-MLIR"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".c", ".py", ".test"]
# Consumer/ is a separate CMake project, built and run by `make check-consumer`.
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "Consumer"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ssd_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%ssd_src_root", config.ssd_src_root))
config.substitutions.append(("%ssd_lib_dir", config.ssd_lib_dir))
# In a sanitizer build (SSD_SANITIZE) the C test programs are built with the
# same flags, so that the sanitizer runtime is loaded first.
config.substitutions.append(
    ("%cc", " ".join(filter(None, [config.c_compiler, config.sanitize_flags]))))
config.substitutions.append(("%python", config.python_executable))
# %expect-exit STATUS CMD...: runs a tool and fails unless it exits with
# STATUS (the CLI tests' bad requests exit with 2).
config.substitutions.append(
    ("%expect-exit", '"%s" "%s"' % (config.python_executable,
                                    os.path.join(config.test_source_root,
                                                 "Inputs", "expect_exit.py"))))
# GoogleTest binaries (e.g. SSDRuntimeTests) land beside the tools.
config.substitutions.append(("%ssd_unit_dir", os.path.join(config.ssd_obj_root, "bin")))

# Scoped FileCheck variables, and no unused check prefixes.
config.environment["FILECHECK_OPTS"] = (
    "-enable-var-scope --allow-unused-prefixes=false"
)

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()

tool_dirs = [config.ssd_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["ssd-opt"], tool_dirs)
# Debian's own mlir-opt, for the plugin tests.
llvm_config.add_tool_substitutions(["mlir-opt"], [config.llvm_tools_dir])
llvm_config.with_environment("PATH", config.ssd_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# libSSDPlugin.so, where it is built (not in sanitizer builds).
if config.ssd_plugin:
    config.available_features.add("ssd-plugin")
    config.substitutions.append(("%ssd_plugin", config.ssd_plugin))

# The shared golden cases sit beside the repository in CI and on the
# developers' machines; elsewhere the tests that need them are unsupported.
golden = os.path.normpath(os.path.join(config.ssd_src_root, "..", "shared", "golden"))
if os.path.isfile(os.path.join(golden, "README.md")):
    config.available_features.add("golden")
    config.substitutions.append(("%golden", golden))

# ptxas assembles the generated PTX for sm_90a where the CUDA toolkit exists.
ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None
)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# cuobjdump disassembles the cubins (the SASS tests) with nvdisasm: both from
# the CUDA toolkit, or from the nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm
# wheels that scripts/install-deps.sh adds where the toolkit lacks them.
def _find_cuda_tool(name):
    found = shutil.which(name)
    if found:
        return found
    candidates = ["/usr/local/cuda/bin/" + name]
    # The wheels' namespace package, as the PATH's python3 sees it (lit may
    # run under another interpreter than the one pip installed into).
    python = shutil.which("python3")
    if python:
        query = "import nvidia; print('\\n'.join(nvidia.__path__))"
        try:
            out = subprocess.run([python, "-c", query], capture_output=True, text=True, timeout=60)
            for root in out.stdout.split() if out.returncode == 0 else []:
                candidates += sorted(glob.glob(os.path.join(root, "*", "bin", name)))
        except (OSError, subprocess.SubprocessError):
            pass
    return next((c for c in candidates if os.access(c, os.X_OK)), None)


cuobjdump = _find_cuda_tool("cuobjdump")
nvdisasm = _find_cuda_tool("nvdisasm")
if cuobjdump and nvdisasm:
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", cuobjdump))
    # cuobjdump -sass looks for nvdisasm on PATH or in NVDISASM_PATH.
    config.environment["NVDISASM_PATH"] = os.path.dirname(nvdisasm)

# A CUDA device: the GPU integration tests run only where one answers. The
# GPU machine, which has no MLIR, runs the same checks through
# scripts/device/run-gpu-suite.sh on precompiled artifacts.
def _has_cuda_device():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


if _has_cuda_device():
    config.available_features.add("cuda-device")
