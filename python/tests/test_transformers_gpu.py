"""ssd_mlir.transformers on CUDA: Hugging Face Mamba-2 models of the 130M and
2.7B shapes (random weights), a prefill of 2048 tokens with the SSD routed
to ssd_mlir's op, against transformers' own torch path, and the prefill's
time against transformers with mamba_ssm's Triton SSD routed in and against
its torch path. Skipped without a CUDA device.

Needs, as python/tests/test_torch_gpu.py: the runtime library
($SSD_MLIR_RUNTIME_LIB) and the artifacts of the models' layers
($SSD_MLIR_ARTIFACTS; scripts/device/build-torch-cases.py builds them where
MLIR is); transformers 5.x; for the timing, mamba_ssm's Triton files from
bench/anchors/fetch.sh ($SSD_MLIR_ANCHORS_CACHE, default
bench/anchors/.cache). Writes the measurements to $SSD_MLIR_HF_RESULTS (a
JSON file) where set.

Accuracy: the float32 model on transformers' torch path is the reference.
  bf16 (both models): max|logits - ref| / max|ref| of the routed bf16 model
    within the project's bf16 bound (1.5e-2) of the bf16 model's own torch
    path, and within twice that path's own distance from the reference (or
    the bound, whichever is larger): transformers' torch SSD hands y to the
    gated norm in float32, ssd_mlir's op (like mamba_ssm's) in bf16.
  f32 (130M): the routed float32 model within 1e-3 of the reference (the
    op's bound, 1e-4, with room for what 24 layers make of it).
"""

import inspect
import json
import os
import pathlib
import statistics

import pytest
import torch

from hf_cases import (GPU_BATCH, GPU_DTYPES, GPU_MODELS, GPU_SEQLEN, make_model,
                      mamba_ssm_scan, rel_error)

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

REPO = pathlib.Path(__file__).resolve().parents[2]
BF16_BOUND = 1.5e-2
F32_BOUND = 1e-3
WARMUP, ITERS = 3, 10

_results: dict = {}


def _transformers():
    try:
        import transformers
    except ImportError as error:
        pytest.fail(f"transformers is not installed ({error}): scripts/device/run-gpu-suite.sh "
                    "installs it from bench/anchors/.cache/hf-wheels (bench/anchors/fetch-hf.sh)")
    return transformers


def _write_results():
    path = os.environ.get("SSD_MLIR_HF_RESULTS")
    if not path:
        return
    transformers = _transformers()
    document = {
        "what": "hf-mamba2-prefill",
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "batch": GPU_BATCH, "seqlen": GPU_SEQLEN,
        "how": ("Mamba2ForCausalLM(config), random weights (transformers' init, "
                "initializer_range 0.02), eval, torch.no_grad; prefill = "
                "model(input_ids, use_cache=True, logits_to_keep=1), eager; ms = "
                f"CUDA events around one prefill, median of {ITERS} after {WARMUP}. "
                "Paths: hf-torch = transformers' own torch SSD; ssd_mlir = "
                "ssd_mlir.transformers.route_ssd(); mamba_ssm-triton = "
                "route_ssd(mamba_ssm's mamba_chunk_scan_combined); in all three the "
                "rest of the mixer is transformers' code (its torch causal conv1d: "
                "causal_conv1d is not installed). max_rel_err = max|logits - ref| / "
                "max|ref|, ref = the float32 model on the torch path."),
        "models": _results,
    }
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(path).write_text(json.dumps(document, indent=2) + "\n")


def _logits(model, ids):
    with torch.no_grad():
        return model(ids, use_cache=False).logits


@pytest.fixture(scope="module", params=list(GPU_MODELS))
def prepared(request):
    """(name, bf16 model, ids, float32 reference logits), built once per model
    (pytest runs every test of one model before building the next); the
    float32 model's routed logits are checked on the way where asked."""
    name = request.param
    _transformers()
    from ssd_mlir.transformers import route_ssd

    config = GPU_MODELS[name]
    row = _results.setdefault(name, {})
    row.update(layers=config["num_hidden_layers"], nheads=config["num_heads"],
               hidden_size=config["hidden_size"], chunk_size=config["chunk_size"])
    model = make_model(config, seed=0, device="cuda")
    ids = torch.randint(0, config["vocab_size"], (GPU_BATCH, GPU_SEQLEN),
                        generator=torch.Generator().manual_seed(1)).cuda()
    reference = _logits(model, ids)
    if torch.float32 in GPU_DTYPES[name]:
        with route_ssd():
            routed = _logits(model, ids)
        row["f32_max_rel_err_ssd_mlir"] = rel_error(routed, reference)
        del routed
    model = model.to(torch.bfloat16)
    yield name, model, ids, reference
    del model, reference
    torch.cuda.empty_cache()


def test_prefill_matches_the_torch_path(prepared):
    from ssd_mlir.transformers import route_ssd

    name, model, ids, reference = prepared
    row = _results[name]
    expected = _logits(model, ids)
    with route_ssd():
        out = _logits(model, ids)
    torch_err = rel_error(expected, reference)
    ours_vs_torch = rel_error(out, expected)
    ours_err = rel_error(out, reference)
    same_top1 = (out.argmax(-1) == expected.argmax(-1)).float().mean().item()
    row.update(bf16_max_rel_err_hf_torch=torch_err, bf16_max_rel_err_ssd_mlir=ours_err,
               bf16_ssd_mlir_vs_hf_torch=ours_vs_torch, bf16_top1_agreement=same_top1)
    _write_results()
    assert out.dtype == expected.dtype and out.shape == expected.shape
    assert torch.isfinite(out).all()
    assert ours_vs_torch <= BF16_BOUND, row
    assert ours_err <= 2 * max(torch_err, BF16_BOUND), row
    if "f32_max_rel_err_ssd_mlir" in row:
        assert row["f32_max_rel_err_ssd_mlir"] <= F32_BOUND, row


def _prefill_ms(model, ids):
    kwargs = {"use_cache": True}
    if "logits_to_keep" in inspect.signature(model.forward).parameters:
        kwargs["logits_to_keep"] = 1
    times = []
    with torch.no_grad():
        for _ in range(WARMUP):
            model(ids, **kwargs)
        torch.cuda.synchronize()
        for _ in range(ITERS):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            model(ids, **kwargs)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def test_prefill_time(prepared):
    from ssd_mlir.transformers import route_ssd

    name, model, ids, reference = prepared
    row = _results.setdefault(name, {})
    ms = row.setdefault("ms", {})
    ms["hf-torch"] = _prefill_ms(model, ids)
    with route_ssd():
        ms["ssd_mlir"] = _prefill_ms(model, ids)
    _write_results()
    cache = os.environ.get("SSD_MLIR_ANCHORS_CACHE", str(REPO / "bench" / "anchors" / ".cache"))
    scan = mamba_ssm_scan(cache)
    with route_ssd(scan):
        with torch.no_grad():
            out = _logits(model, ids)  # also Triton's autotuning, before the timing
        row["bf16_max_rel_err_mamba_ssm"] = rel_error(out, reference)
        del out
        ms["mamba_ssm-triton"] = _prefill_ms(model, ids)
    row["speedup_vs_mamba_ssm"] = ms["mamba_ssm-triton"] / ms["ssd_mlir"]
    row["speedup_vs_hf_torch"] = ms["hf-torch"] / ms["ssd_mlir"]
    _write_results()
    print(f"{name}: prefill {GPU_BATCH}x{GPU_SEQLEN} ms: " +
          ", ".join(f"{k} {v:.2f}" for k, v in ms.items()))
