#!/usr/bin/env python3
"""Prepares, where MLIR is, what python/tests/test_torch_gpu.py needs on the
GPU machine (which has torch and CUDA but no MLIR):

  OUT/artifacts/<artifact_name>/   one artifact per kernel the GPU cases run
                                   (ssd_mlir.torch.kernel_spec of each call at
                                   the tuned chunk size and as asked; the
                                   golden cases as asked; compiled as
                                   ssd-compile does, sm_90a)
  OUT/cases/<name>.pt              each case's inputs, call options and the
                                   reference outputs (float64 recurrence)
  OUT/cases/golden-<case>-<dtype>-q<Q>.pt   every golden case (../shared/golden,
                                   or $SSD_GOLDEN_DIR) in f32, bf16 and f16 at
                                   chunk sizes 64, 128 and 256, with its
                                   expected outputs (torch_cases.golden_case);
                                   listed in OUT/cases/golden.txt. Written only
                                   where the golden folder is
  OUT/commands.txt                 the equivalent ssd-compile commands
  OUT/hf-artifacts.txt             the artifacts (also under OUT/artifacts)
                                   of the Hugging Face Mamba-2 models that
                                   python/tests/test_transformers_gpu.py runs
                                   (130M and 2.7B shapes): the kernels their
                                   prefill asks ssd_mlir for, found by running
                                   the models on the meta device; written only
                                   where transformers is installed

    SSD_MLIR_LIB=build/lib python3 scripts/device/build-torch-cases.py [OUT]

OUT defaults to device-torch/ (ignored by git). On the GPU machine:

    SSD_MLIR_ARTIFACTS=OUT/artifacts SSD_MLIR_TORCH_CASES=OUT/cases \\
    SSD_MLIR_RUNTIME_LIB=<runtime-only build>/lib python3 -m pytest python/tests/test_torch_gpu.py
"""
import importlib.util
import os
import pathlib
import sys

src = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(src / "python"), str(src / "python" / "tests")]

import torch  # noqa: E402

from ssd_mlir import _layer  # noqa: E402
from ssd_mlir.torch import artifact_name, compile_command  # noqa: E402
from torch_cases import (DTYPES, GOLDEN_CHUNKS, GPU_CASES, gpu_case,  # noqa: E402
                         golden_case, kernel_specs, reference)

TARGET = "sm_90a"


def main() -> int:
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else src / "device-torch")
    (out / "artifacts").mkdir(parents=True, exist_ok=True)
    (out / "cases").mkdir(parents=True, exist_ok=True)
    commands = []
    specs = {}
    for case in GPU_CASES:
        args, call = gpu_case(case)
        for spec in kernel_specs(args, call):
            specs[artifact_name(spec, TARGET)] = spec
        varlen = call.get("return_varlen_states", False)
        ref_args = {k: v for k, v in args.items() if not (varlen and k == "seq_idx")}
        y, states = reference(ref_args, chunk_size=call["chunk_size"],
                              dt_softplus=call.get("dt_softplus", False),
                              dt_limit=call.get("dt_limit", (0.0, float("inf"))),
                              varlen=varlen)
        torch.save({"args": args, "call": call, "y": y, "states": states},
                   out / "cases" / f"{case['name']}.pt")
    golden = pathlib.Path(os.environ.get("SSD_GOLDEN_DIR", src.parent / "shared" / "golden"))
    golden_names = []
    if (golden / "README.md").is_file():
        for folder in sorted(p for p in golden.iterdir() if (p / "case.json").is_file()):
            for dtype in DTYPES:
                for chunk in GOLDEN_CHUNKS:
                    case = golden_case(folder, dtype, chunk)
                    # The golden tests run each chunk size as asked.
                    spec = kernel_specs(case["args"], case["call"])[-1]
                    specs[artifact_name(spec, TARGET)] = spec
                    name = f"golden-{folder.name}-{dtype}-q{chunk}"
                    torch.save(case, out / "cases" / f"{name}.pt")
                    golden_names.append(name)
    else:
        print(f"note: no golden cases at {golden} (set SSD_GOLDEN_DIR): "
              "the golden torch tests will skip")
    golden_list = out / "cases" / "golden.txt"
    if golden_names:
        golden_list.write_text("\n".join(golden_names) + "\n")
    elif golden_list.exists():
        golden_list.unlink()
    hf_names = []
    if importlib.util.find_spec("transformers") is not None:
        import hf_cases
        for model, config in hf_cases.GPU_MODELS.items():
            for dtype in hf_cases.GPU_DTYPES[model]:
                for spec in hf_cases.prefill_specs(config, dtype):
                    name = artifact_name(spec, TARGET)
                    specs[name] = spec
                    hf_names.append(f"{model} {str(dtype).replace('torch.', '')} {name}")
    else:
        print("note: transformers is not installed: no artifacts for "
              "python/tests/test_transformers_gpu.py (pip install 'transformers>=5')")
    # The missing-artifact test asks for a headdim no case uses: keep it absent.
    for name, spec in sorted(specs.items()):
        folder = out / "artifacts" / name
        commands.append(compile_command(spec, TARGET, str(out / "artifacts")))
        if (folder / "manifest.json").is_file():
            continue
        print("compiling", name, flush=True)
        _layer.compile_artifact(spec, str(folder), target=TARGET)
    (out / "commands.txt").write_text("\n".join(commands) + "\n")
    hf_list = out / "hf-artifacts.txt"
    if hf_names:
        hf_list.write_text("\n".join(hf_names) + "\n")
    elif hf_list.exists():
        hf_list.unlink()
    print(f"wrote {len(GPU_CASES)} cases, {len(golden_names)} golden cases and "
          f"{len(specs)} artifacts under {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
