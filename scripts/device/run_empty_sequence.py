#!/usr/bin/env python3
"""Launches artifacts through the runtime on sequences without tokens (L = 0)
and checks that every state passes through.

    run_empty_sequence.py ARTIFACT_DIR...

Each artifact is a layer of 8 heads, headdim 64, dstate 128, one group, bf16
x/B/C with D and initial_states in the manifest's state dtype (scripts/device/build-artifacts.sh builds one
per strategy into empty-sequence/). At L = 0 the fused kernel still runs (its
grid is the persistent one): init and final items only, and TMA descriptors
over empty tensors. For b in 1, 2 and 8 the final states must equal the
initial states bit for bit. Needs PyTorch and $SSD_MLIR_RUNTIME_LIB (the
runtime's build/lib). Prints one PASS/FAIL line per launch; exits 1 when
any fails.
"""
import json
import os
import sys

import torch

from ssd_mlir._runtime import Artifact, DeviceTensor

HEADS, HEADDIM, DSTATE = 8, 64, 128
DTYPES = {torch.bfloat16: "bf16", torch.float32: "f32", torch.float16: "f16"}
STATE_DTYPES = {"f32": torch.float32, "f16": torch.float16}


def state_dtype(folder):
    """The states' dtype the artifact was compiled for (its manifest)."""
    with open(os.path.join(folder, "manifest.json")) as f:
        name = json.load(f)["constants"].get("state_dtype", "f32")
    return STATE_DTYPES[name]


def launch(art, b, states):
    dev = torch.device("cuda")
    gen = torch.Generator(device="cpu").manual_seed(b)
    h, p, n = HEADS, HEADDIM, DSTATE
    t = {
        "x": torch.zeros((b, 0, h, p), dtype=torch.bfloat16, device=dev),
        "dt": torch.zeros((b, 0, h), dtype=torch.float32, device=dev),
        "A": -torch.rand(h, generator=gen).to(dev),
        "B": torch.zeros((b, 0, 1, n), dtype=torch.bfloat16, device=dev),
        "C": torch.zeros((b, 0, 1, n), dtype=torch.bfloat16, device=dev),
        "D": torch.rand(h, generator=gen).to(dev),
        "initial_states": torch.randn((b, h, p, n), generator=gen).to(dev, states),
        "y": torch.zeros((b, 0, h, p), dtype=torch.bfloat16, device=dev),
        "final_states": torch.full((b, h, p, n), float("nan"), dtype=states,
                                   device=dev),
    }
    tensors = [DeviceTensor(name, v.data_ptr(), DTYPES[v.dtype], list(v.shape),
                            list(v.stride()), 0) for name, v in t.items()]
    size = art.workspace_size(tensors)
    workspace = torch.empty(max(size, 1), dtype=torch.uint8, device=dev)
    art.launch(tensors, torch.cuda.current_stream().cuda_stream,
               workspace.data_ptr(), size)
    torch.cuda.synchronize()
    return torch.equal(t["final_states"], t["initial_states"])


def main(folders):
    failed = 0
    for folder in folders:
        art = Artifact(folder)
        states = state_dtype(folder)
        for b in (1, 2, 8):
            try:
                ok = launch(art, b, states)
                detail = "final states equal the initial states" if ok else \
                    "final states differ from the initial states"
            except Exception as error:  # the runtime's message is the detail
                ok, detail = False, f"{type(error).__name__}: {error}"
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'}: {folder} b={b} L=0: {detail}")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
