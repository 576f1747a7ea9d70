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

Accuracy, max|out - ref| / max|ref| (the golden error measure):
  every layer's SSD (bf16, both models): during the routed bf16 prefill, each
    call's y and final states against transformers' torch SSD computed in
    float32 from the same inputs, within the project's bf16 bound (1.5e-2);
  logits (bf16, both models): against the float32 model on transformers'
    torch path, within 1.5 times the bf16 model's own torch path's distance
    from it (on the H200: 4e-2 at 130M, 7e-2 at 2.7B, for the routed model,
    transformers' torch path and mamba_ssm's alike: bf16 rounding through 24
    or 64 layers, not the SSD, sets it);
  logits (f32, 130M): the routed float32 model within 1e-4 (the op's float32
    bound) of the float32 model on the torch path.

Times: the whole prefill, eager (as transformers runs it) and captured in a
CUDA graph (device time alone), and the SSD alone on the first layer's inputs
(eager, and in a CUDA graph). ssd_mlir runs its kernels at its tuned chunk
size (128) by default; "ssd_mlir-asked-chunk" is the same at the chunk size
the model asks (256, $SSD_MLIR_CHUNK_SIZE=requested).
"""

import inspect
import json
import os
import pathlib

import pytest
import torch

from hf_cases import (GPU_BATCH, GPU_DTYPES, GPU_MODELS, GPU_SEQLEN, checking, make_model,
                      mamba_ssm_scan, rel_error, time_ms, torch_ssd)

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

REPO = pathlib.Path(__file__).resolve().parents[2]
BF16_BOUND = 1.5e-2
BF16_MODEL_FACTOR = 1.5
F32_BOUND = 1e-4
WARMUP, ITERS = 3, 10

_results: dict = {}
_first_layer: dict = {}


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
                f"CUDA events around one prefill, median of {ITERS} after {WARMUP}; graph_ms: "
                "the same without a cache (use_cache=False) captured in one CUDA graph, "
                "replays timed alike (device time, no host overhead). "
                "Paths: hf-torch = transformers' own torch SSD; ssd_mlir = "
                "ssd_mlir.transformers.route_ssd(); mamba_ssm-triton = "
                "route_ssd(mamba_ssm's mamba_chunk_scan_combined); in all three the "
                "rest of the mixer is transformers' code (its torch causal conv1d: "
                "causal_conv1d is not installed). ssd_layer_ms: the SSD alone on the "
                "first layer's inputs (as the mixer passes them), CUDA events, median; "
                "ssd_layer_graph_ms: the same captured in a CUDA graph. ssd_mlir runs "
                "its tuned chunk size (128), ssd_mlir-asked-chunk the model's "
                "(SSD_MLIR_CHUNK_SIZE=requested). "
                "max_rel_err = max|logits - ref| / max|ref|, ref = the float32 model on "
                "the torch path; ssd_layers_max_rel_err_*: every layer's SSD against "
                "transformers' torch SSD in float32 on the same inputs."),
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
    from ssd_mlir.torch import mamba_chunk_scan_combined
    from ssd_mlir.transformers import route_ssd

    name, model, ids, reference = prepared
    row = _results[name]
    expected = _logits(model, ids)
    errors: list = []
    first: dict = {}
    with route_ssd(checking(mamba_chunk_scan_combined, errors, first)):
        out = _logits(model, ids)
    _first_layer[name] = first
    torch_err = rel_error(expected, reference)
    ours_err = rel_error(out, reference)
    row.update(
        ssd_layers_checked=len(errors),
        ssd_layers_max_rel_err_y=max(e["y"] for e in errors),
        ssd_layers_max_rel_err_states=max(e["states"] for e in errors),
        bf16_max_rel_err_hf_torch=torch_err, bf16_max_rel_err_ssd_mlir=ours_err,
        bf16_ssd_mlir_vs_hf_torch=rel_error(out, expected),
        bf16_top1_agreement_ssd_mlir=(out.argmax(-1) == reference.argmax(-1)).float().mean().item(),
        bf16_top1_agreement_hf_torch=(expected.argmax(-1) == reference.argmax(-1)).float().mean().item())
    _write_results()
    assert out.dtype == expected.dtype and out.shape == expected.shape
    assert torch.isfinite(out).all()
    assert len(errors) == row["layers"]
    assert row["ssd_layers_max_rel_err_y"] <= BF16_BOUND, row
    assert row["ssd_layers_max_rel_err_states"] <= BF16_BOUND, row
    assert ours_err <= BF16_MODEL_FACTOR * torch_err, row
    if "f32_max_rel_err_ssd_mlir" in row:
        assert row["f32_max_rel_err_ssd_mlir"] <= F32_BOUND, row


def _prefill_ms(model, ids):
    kwargs = {"use_cache": True}
    if "logits_to_keep" in inspect.signature(model.forward).parameters:
        kwargs["logits_to_keep"] = 1
    with torch.no_grad():
        return time_ms(lambda: model(ids, **kwargs), WARMUP, ITERS)


def _replayed_ms(run, warm_runs):
    """run captured in one CUDA graph (after warm_runs runs on a side stream,
    as capture asks): device time of its replays, no host overhead."""
    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warm_runs):
                run()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            run()
        try:
            return time_ms(graph.replay, WARMUP, ITERS)
        finally:
            del graph
            torch.cuda.empty_cache()


def _record_replayed(row, key, path, run, warm_runs):
    """row[key][path] = _replayed_ms(run); a path that cannot be captured is
    reported under row["graph_errors"], not failed."""
    try:
        row.setdefault(key, {})[path] = _replayed_ms(run, warm_runs)
    except Exception as error:
        suffix = "" if key == "graph_ms" else "-layer"
        row.setdefault("graph_errors", {})[path + suffix] = repr(error)[:400]


def _graph(row, path, model, ids):
    """The prefill (without a cache) in one CUDA graph."""
    kwargs = {"use_cache": False}
    if "logits_to_keep" in inspect.signature(model.forward).parameters:
        kwargs["logits_to_keep"] = 1
    _record_replayed(row, "graph_ms", path, lambda: model(ids, **kwargs), warm_runs=2)


def _layer_call(scan, args):
    """The SSD alone on the first layer's inputs, as the mixer called it."""
    call = {k: v for k, v in args.items() if k not in ("x", "dt", "A", "B", "C")}
    return lambda: scan(args["x"], args["dt"], args["A"], args["B"], args["C"], **call)


def _layer_ms(scan, args):
    with torch.no_grad():
        return time_ms(_layer_call(scan, args), WARMUP, ITERS)


def _layer_graph(row, path, scan, args):
    """The SSD alone on the first layer's inputs, in a CUDA graph."""
    _record_replayed(row, "ssd_layer_graph_ms", path, _layer_call(scan, args), warm_runs=1)


def test_prefill_time(prepared, monkeypatch):
    from ssd_mlir.torch import mamba_chunk_scan_combined
    from ssd_mlir.transformers import route_ssd

    name, model, ids, reference = prepared
    row = _results.setdefault(name, {})
    ms = row.setdefault("ms", {})
    layer_ms = row.setdefault("ssd_layer_ms", {})
    if name not in _first_layer:
        first: dict = {}
        with route_ssd(checking(mamba_chunk_scan_combined, [], first)):
            _logits(model, ids)
        _first_layer[name] = first
    args = _first_layer[name]
    ms["hf-torch"] = _prefill_ms(model, ids)
    layer_ms["hf-torch"] = _layer_ms(torch_ssd(), args)
    _graph(row, "hf-torch", model, ids)
    _layer_graph(row, "hf-torch", torch_ssd(), args)
    with route_ssd():
        ms["ssd_mlir"] = _prefill_ms(model, ids)
        _graph(row, "ssd_mlir", model, ids)
    layer_ms["ssd_mlir"] = _layer_ms(mamba_chunk_scan_combined, args)
    _layer_graph(row, "ssd_mlir", mamba_chunk_scan_combined, args)
    with monkeypatch.context() as asked:
        asked.setenv("SSD_MLIR_CHUNK_SIZE", "requested")
        with route_ssd():
            _graph(row, "ssd_mlir-asked-chunk", model, ids)
        _layer_graph(row, "ssd_mlir-asked-chunk", mamba_chunk_scan_combined, args)
    _write_results()
    cache = os.environ.get("SSD_MLIR_ANCHORS_CACHE", str(REPO / "bench" / "anchors" / ".cache"))
    scan = mamba_ssm_scan(cache)
    with route_ssd(scan):
        out = _logits(model, ids)  # also Triton's autotuning, before the timing
        row["bf16_max_rel_err_mamba_ssm"] = rel_error(out, reference)
        del out
        ms["mamba_ssm-triton"] = _prefill_ms(model, ids)
        _graph(row, "mamba_ssm-triton", model, ids)
    layer_ms["mamba_ssm-triton"] = _layer_ms(scan, args)
    _layer_graph(row, "mamba_ssm-triton", scan, args)
    row["speedup_vs_mamba_ssm"] = ms["mamba_ssm-triton"] / ms["ssd_mlir"]
    row["speedup_vs_hf_torch"] = ms["hf-torch"] / ms["ssd_mlir"]
    _write_results()
    print(f"{name}: prefill {GPU_BATCH}x{GPU_SEQLEN} ms: " +
          ", ".join(f"{k} {v:.2f}" for k, v in ms.items()) + "; in a CUDA graph: " +
          ", ".join(f"{k} {v:.2f}" for k, v in row.get("graph_ms", {}).items()) +
          "; SSD of one layer ms: " +
          ", ".join(f"{k} {v:.3f}" for k, v in layer_ms.items()) + "; in a CUDA graph: " +
          ", ".join(f"{k} {v:.3f}" for k, v in row.get("ssd_layer_graph_ms", {}).items()))
