"""ssd_mlir.torch on CUDA tensors. Skipped without a CUDA device.

Needs the runtime library ($SSD_MLIR_RUNTIME_LIB), the artifacts and the
cases that scripts/device/build-torch-cases.py writes where MLIR is
($SSD_MLIR_ARTIFACTS, $SSD_MLIR_TORCH_CASES): on a GPU machine a missing
one fails the tests rather than skipping them. The golden cases
(cases/golden.txt) are named at collection time: without
$SSD_MLIR_TORCH_CASES or its golden.txt they skip, saying why.
"""

import json
import os
import pathlib

import pytest
import torch

from ssd_mlir import torch as ssd_torch
from ssd_mlir.torch import ArtifactNotFoundError, mamba_chunk_scan_combined
from torch_cases import BOUNDS, GPU_CASES, DTYPES, make_inputs, rel_error

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="needs a CUDA device")


def load(name):
    folder = os.environ.get("SSD_MLIR_TORCH_CASES")
    assert folder, "set SSD_MLIR_TORCH_CASES (scripts/device/build-torch-cases.py)"
    case = torch.load(pathlib.Path(folder) / f"{name}.pt")
    args = {k: (v.cuda() if isinstance(v, torch.Tensor) else v)
            for k, v in case["args"].items()}
    return args, case["call"], case["y"], case["states"]


def check_outputs(out, call, dtype, expected_y, expected_states, C_dtype):
    """y and the states asked for against the expected ones, within the
    golden bound of the compute dtype."""
    if not isinstance(out, tuple):
        out = (out,)
    y = out[0]
    assert y.dtype == dtype
    assert rel_error(y, expected_y) <= BOUNDS[dtype]
    if call.get("return_varlen_states"):
        final, seqs = out[1], out[2]
        assert seqs.dtype == C_dtype
        assert rel_error(seqs, expected_states) <= BOUNDS[dtype]
        assert rel_error(final, expected_states[-1:]) <= BOUNDS[dtype]
    elif call.get("return_final_states"):
        assert out[1].dtype == torch.float32
        assert rel_error(out[1], expected_states) <= BOUNDS[dtype]


@pytest.mark.parametrize("name", [c["name"] for c in GPU_CASES])
def test_matches_reference(name):
    args, call, expected_y, expected_states = load(name)
    out = mamba_chunk_scan_combined(**args, **call)
    y = out[0] if isinstance(out, tuple) else out
    assert y.device == args["x"].device
    check_outputs(out, call, args["x"].dtype, expected_y, expected_states, args["C"].dtype)


def golden_names():
    """The golden cases build-torch-cases.py wrote (read at collection), or
    one skipped placeholder saying why there are none."""
    folder = os.environ.get("SSD_MLIR_TORCH_CASES")
    listing = pathlib.Path(folder) / "golden.txt" if folder else None
    if listing is None or not listing.is_file():
        why = (f"no {listing} (build-torch-cases.py found no golden folder)" if listing
               else "set SSD_MLIR_TORCH_CASES (scripts/device/build-torch-cases.py)")
        return [pytest.param(None, id="none", marks=pytest.mark.skip(reason=why))]
    return listing.read_text().split()


GOLDEN = golden_names()
# One golden case per dtype (every optional input but varlen) for
# torch.compile and CUDA-graph replay.
GOLDEN_COMPILED = [n for n in GOLDEN if isinstance(n, str)
                   and n.startswith("golden-c02_all_features-") and n.endswith("-q64")]
GOLDEN_COMPILED = GOLDEN_COMPILED or GOLDEN[:1]


@pytest.fixture
def requested_chunk_size(monkeypatch):
    """The kernels at the chunk size the call asks (each golden case runs at
    64, 128 and 256), not the tuned one."""
    monkeypatch.setenv(ssd_torch.CHUNK_SIZE_ENV, "requested")


@pytest.mark.usefixtures("requested_chunk_size")
@pytest.mark.parametrize("name", GOLDEN)
def test_golden(name):
    args, call, expected_y, expected_states = load(name)
    out = mamba_chunk_scan_combined(**args, **call)
    check_outputs(out, call, args["x"].dtype, expected_y, expected_states, args["C"].dtype)


@pytest.mark.usefixtures("requested_chunk_size")
@pytest.mark.parametrize("name", GOLDEN_COMPILED)
def test_golden_torch_compile_fullgraph(name):
    args, call, expected_y, expected_states = load(name)

    def layer(**tensors):
        return mamba_chunk_scan_combined(**tensors, **call)

    out = torch.compile(layer, fullgraph=True)(**args)
    check_outputs(out, call, args["x"].dtype, expected_y, expected_states, args["C"].dtype)


@pytest.mark.usefixtures("requested_chunk_size")
@pytest.mark.parametrize("name", GOLDEN_COMPILED)
def test_golden_cuda_graph_replay(name):
    # Captured on zeros (integer inputs kept), replayed on the case's inputs:
    # the replay reads the static inputs as they are at replay.
    args, call, expected_y, expected_states = load(name)
    static = {k: (v.clone() if not v.is_floating_point() else torch.zeros_like(v))
              for k, v in args.items()}
    mamba_chunk_scan_combined(**static, **call)  # loads the module before capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = mamba_chunk_scan_combined(**static, **call)
    for k, v in args.items():
        static[k].copy_(v)
    graph.replay()
    torch.cuda.synchronize()
    check_outputs(out, call, args["x"].dtype, expected_y, expected_states, args["C"].dtype)


@pytest.mark.parametrize("name", ["mamba2-bf16", "varlen-bf16"])
def test_tuned_chunk_size_and_the_requested_one(name, monkeypatch):
    # By default the kernel runs at the tuned chunk size, whatever the call
    # asks; $SSD_MLIR_CHUNK_SIZE=requested runs the asked one. Both are
    # within the bound of the reference.
    args, call, expected_y, expected_states = load(name)
    tuned = ssd_torch.kernel_spec(**args, **call)
    assert tuned.chunk_size == ssd_torch.TUNED_CHUNK_SIZE != call["chunk_size"]
    out = mamba_chunk_scan_combined(**args, **call)
    check_outputs(out, call, args["x"].dtype, expected_y, expected_states, args["C"].dtype)
    monkeypatch.setenv(ssd_torch.CHUNK_SIZE_ENV, "requested")
    asked = ssd_torch.kernel_spec(**args, **call)
    assert asked.chunk_size == call["chunk_size"]
    out = mamba_chunk_scan_combined(**args, **call)
    check_outputs(out, call, args["x"].dtype, expected_y, expected_states, args["C"].dtype)
    device = args["x"].device
    assert ssd_torch._artifact(tuned, device) is not ssd_torch._artifact(asked, device)


def plain_case():
    args, call, _, _ = load("plain-f32")
    return args, call


def projection_views(args):
    """x, B, C, z and dt as a Mamba-2 layer hands them over: z and dt views
    of the in_proj output, x, B and C views of the conv output."""
    b, L, h, p = args["x"].shape
    g, n = args["B"].shape[2:]
    flat = lambda t: t.reshape(b, L, -1)
    xbc = torch.cat([flat(args["x"]), flat(args["B"]), flat(args["C"])], dim=-1)
    x, B, C = torch.split(xbc, [h * p, g * n, g * n], dim=-1)
    views = dict(args, x=x.view(b, L, h, p), B=B.view(b, L, g, n), C=C.view(b, L, g, n))
    # dt stays float32 (a low-precision dt is converted, a copy anyway); its
    # rows are padded to a 16-byte multiple, as the projection's are.
    pad = 4 - h % 4 + 4
    dt_rows = torch.cat([args["dt"], torch.zeros(b, L, pad, device=args["dt"].device)], -1)
    views["dt"] = dt_rows[..., :h]
    if "z" in args:
        zx = torch.cat([flat(args["z"]), flat(args["x"])], dim=-1)
        views["z"] = zx[..., :h * p].view(b, L, h, p)
    return views


@pytest.mark.parametrize("name", ["plain-f32", "mamba2-bf16", "tma-bf16"])
def test_projection_views_are_read_in_place(name):
    args, call, _, _ = load(name)
    views = projection_views(args)
    out = mamba_chunk_scan_combined(**views, **call)
    artifact = ssd_torch._artifact(ssd_torch.kernel_spec(**views, **call),
                                   views["x"].device)
    for key in ("x", "B", "C", "dt", "z"):
        if key in args:
            assert not views[key].is_contiguous(), key
            layout = artifact.layouts[key]
            assert ssd_torch._as_taken(views[key], *layout) is views[key], (key, layout)
    expected = mamba_chunk_scan_combined(**args, **call)
    for got, want in zip(out if isinstance(out, tuple) else (out,),
                         expected if isinstance(expected, tuple) else (expected,)):
        assert torch.equal(got, want)


def test_launches_on_the_current_stream():
    args, call = plain_case()
    expected = mamba_chunk_scan_combined(**args, **call)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = mamba_chunk_scan_combined(**args, **call)
    torch.cuda.current_stream().wait_stream(side)
    assert torch.equal(y, expected)


def copies_by_tma(name):
    """Whether the artifact the case runs copies its rows by TMA (descriptors
    the launch encodes and passes to the kernel)."""
    args, call, _, _ = load(name)
    artifact = ssd_torch._artifact(ssd_torch.kernel_spec(**args, **call), args["x"].device)
    manifest = json.loads((pathlib.Path(artifact.folder) / "manifest.json").read_text())
    return any(param.get("kind") == "tma"
               for kernel in manifest["kernels"] for param in kernel["params"])


@pytest.mark.parametrize("name", ["mamba2-bf16", "tma-bf16"])
def test_cuda_graph_replay(name):
    # Captured once, replayed twice on other inputs; the TMA case checks that
    # the descriptors the capture took with the launch still hold at every replay.
    case = next(c for c in GPU_CASES if c["name"] == name)
    assert copies_by_tma(name) == (name == "tma-bf16")
    args, call, _, _ = load(name)
    static = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in args.items()}
    mamba_chunk_scan_combined(**static, **call)  # loads the module before capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = mamba_chunk_scan_combined(**static, **call)
    for seed in (99, 100):
        fresh = make_inputs(seed, dtype=DTYPES[case["dtype"]], **case["shape"],
                            **case["inputs"])
        for k, v in fresh.items():
            static[k].copy_(v)
        graph.replay()
        torch.cuda.synchronize()
        eager = mamba_chunk_scan_combined(**{k: v.cuda() for k, v in fresh.items()}, **call)
        for got, want in zip(out if isinstance(out, tuple) else (out,),
                             eager if isinstance(eager, tuple) else (eager,)):
            assert torch.equal(got, want), seed


def test_torch_compile_fullgraph():
    args, call, expected_y, _ = load("mamba2-bf16")

    def layer(x, dt, A, B, C, D, z, dt_bias):
        return mamba_chunk_scan_combined(x, dt, A, B, C, D=D, z=z, dt_bias=dt_bias,
                                         **call) * 2

    y = torch.compile(layer, fullgraph=True)(**args)
    assert rel_error(y / 2, expected_y) <= BOUNDS[torch.bfloat16]


def test_device_mismatch():
    args, call = plain_case()
    with pytest.raises(ValueError, match=r"A: expected a tensor on cuda:0 \(x's device\), got cpu"):
        mamba_chunk_scan_combined(**dict(args, A=args["A"].cpu()), **call)


def test_missing_artifact_names_the_ssd_compile_command(tmp_path, monkeypatch):
    from ssd_mlir import _layer
    from ssd_mlir._library import LibraryNotFoundError
    try:
        _layer.lib()
        pytest.skip("libSSDCAPI is loadable here: the artifact would be compiled")
    except LibraryNotFoundError:
        pass
    monkeypatch.setenv("SSD_MLIR_ARTIFACTS", str(tmp_path))
    monkeypatch.setenv("SSD_MLIR_CACHE", str(tmp_path / "cache"))
    args = make_inputs(0, 1, 16, 2, 12, 1, 16, DTYPES["f32"])  # headdim 12: no artifact
    with pytest.raises(ArtifactNotFoundError,
                       match=r"ssd-compile --nheads 2 --headdim 12 --dstate 16"):
        mamba_chunk_scan_combined(**{k: v.cuda() for k, v in args.items()}, chunk_size=64)
    assert ssd_torch.ARTIFACTS_ENV == "SSD_MLIR_ARTIFACTS"
