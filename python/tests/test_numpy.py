"""ssd_mlir.numpy: signature, argument errors, every feature in float32 and
float16 against the project's float64 reference (ssdLayerReference), array
layouts, the shared kernel cache, and an import without PyTorch.

Runs with numpy alone (and skips without it); the cross-checks against
ssd_mlir.torch skip where PyTorch is not installed. Shapes are shared so
that the JIT compiles one kernel per (features, dtype).
"""

from __future__ import annotations

import math
import os
import pathlib
import subprocess
import sys
import textwrap
from typing import Any

import pytest

np = pytest.importorskip("numpy")  # the numpy extra

import ssd_mlir  # noqa: E402
from ssd_mlir import _combined, _layer  # noqa: E402
from ssd_mlir.numpy import mamba_chunk_scan_combined  # noqa: E402
from op_contract import FEATURE_CASES, assert_mamba_ssm_signature  # noqa: E402

# The golden bounds (max|out - expected| / max|expected|), as for the torch op.
BOUNDS = {np.float32: 1e-4, np.float16: 5e-3}

SHAPE = dict(batch=2, seqlen=37, nheads=4, headdim=4, ngroups=2, dstate=8)


def make_inputs(seed: int, batch: int, seqlen: int, nheads: int, headdim: int,
                ngroups: int, dstate: int, dtype: Any = np.float32,
                D: str | None = None, z: bool = False, dt_bias: bool = False,
                initial_states: bool = False, seq_idx_cuts: tuple[int, ...] = (),
                cu_seqlens: tuple[int, ...] | None = None) -> dict[str, Any]:
    """Inputs of mamba_chunk_scan_combined as keyword arguments (numpy)."""
    rng = np.random.default_rng(seed)
    b, L, h, p, g, n = batch, seqlen, nheads, headdim, ngroups, dstate

    def rand(*shape: int, scale: float = 1.0) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    args: dict[str, Any] = {
        "x": rand(b, L, h, p).astype(dtype),
        # Small steps keep the state bounded over a few hundred tokens.
        "dt": (rng.random((b, L, h)) * 0.2 + 0.01).astype(np.float32),
        "A": -(rng.random(h) * 2.0 + 0.1).astype(np.float32),
        "B": rand(b, L, g, n).astype(dtype),
        "C": rand(b, L, g, n).astype(dtype),
    }
    if D == "h":
        args["D"] = rand(h)
    elif D == "hp":
        args["D"] = rand(h, p)
    if z:
        args["z"] = rand(b, L, h, p).astype(dtype)
    if dt_bias:
        args["dt_bias"] = rand(h, scale=0.1)
    if initial_states:
        args["initial_states"] = rand(b, h, p, n, scale=0.5)
    if seq_idx_cuts:
        row = np.zeros(L, dtype=np.int32)
        for cut in seq_idx_cuts:
            row[cut:] += 1
        args["seq_idx"] = np.tile(row, (b, 1))
    if cu_seqlens is not None:
        args["cu_seqlens"] = np.array(cu_seqlens, dtype=np.int32)
    return args


def small(dtype: Any = np.float32, seed: int = 0, **features: Any) -> dict[str, Any]:
    return make_inputs(seed, dtype=dtype, **{**SHAPE, **features})


def reference(args: dict[str, Any], dt_softplus: bool = False,
              dt_limit: tuple[float, float] = (0.0, math.inf),
              varlen: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(y, states) of the project's float64 reference recurrence: the final
    states (b, h, p, n), or with varlen the end state of every sequence of
    cu_seqlens, each from its own start (the first from initial_states)."""
    b, L, h, p = args["x"].shape
    g, n = args["B"].shape[2:]
    names = ("x", "dt", "A", "B", "C", "D", "z", "dt_bias")
    inputs = {k: args[k] for k in names if args.get(k) is not None}
    init = args.get("initial_states")
    features = []
    if "D" in inputs:
        features.append("D" if inputs["D"].ndim == 1 else "Dhp")
    features += [f for f in ("z", "dt_bias") if f in inputs]
    if dt_softplus:
        features.append("softplus")
    if tuple(dt_limit) != (0.0, math.inf):
        features.append("dt_limit")
    if varlen:
        cu = args["cu_seqlens"]
        s = cu.shape[0] - 1
        inputs["cu_seqlens"] = cu
        if init is not None:
            per_seq = np.zeros((s, h, p, n), dtype=np.float32)
            per_seq[:1] = init[:1]
            inputs["initial_states"] = per_seq
            features.append("initial_states")
        features.append("varlen")
    else:
        s = b
        if init is not None:
            inputs["initial_states"] = init
            features.append("initial_states")
        if args.get("seq_idx") is not None:
            inputs["seq_idx"] = args["seq_idx"]
            features.append("seq_idx")
    spec = _layer.LayerSpec(nheads=h, headdim=p, dstate=n, ngroups=g, chunk_size=16,
                            features=tuple(features),
                            dt_limit=(float(dt_limit[0]), float(dt_limit[1])))
    keep, tensors = [], []
    for name, t in inputs.items():
        integer = name in ("seq_idx", "cu_seqlens")
        t = np.ascontiguousarray(t, dtype=np.int32 if integer else np.float32)
        keep.append(t)
        tensors.append(_layer.HostTensor(name, t.ctypes.data, "i32" if integer else "f32",
                                         t.shape))
    y = np.empty((b, L, h, p), dtype=np.float64)
    states = np.empty((s, h, p, n), dtype=np.float64)
    _layer.reference(spec, tensors, y.ctypes.data, states.ctypes.data)
    return y, states


def rel_error(out: np.ndarray, expected: np.ndarray) -> float:
    """The golden error measure: max|out - expected| / max|expected|."""
    if not expected.size:
        return 0.0
    scale = float(np.abs(expected).max())
    diff = float(np.abs(out.astype(np.float64) - expected).max())
    return diff / scale if scale > 0 else diff


def test_lazy_attribute():
    assert ssd_mlir.numpy.mamba_chunk_scan_combined is mamba_chunk_scan_combined


def test_signature_is_mamba_ssms():
    assert_mamba_ssm_signature(mamba_chunk_scan_combined)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("case", list(FEATURE_CASES))
def test_matches_reference(case, dtype):
    inputs, call = FEATURE_CASES[case]
    args = small(dtype, seed=sum(map(ord, case)), **inputs)
    out = mamba_chunk_scan_combined(**args, chunk_size=8, **call)
    expected_y, expected_states = reference(
        args, dt_softplus=call.get("dt_softplus", False),
        dt_limit=call.get("dt_limit", (0.0, math.inf)))
    if call.get("return_final_states"):
        y, final = out
        assert final.dtype == np.float32 and final.shape == (2, 4, 4, 8)
        assert rel_error(final, expected_states) <= BOUNDS[dtype]
    else:
        assert isinstance(out, np.ndarray)
        y = out
    assert y.dtype == dtype and y.shape == args["x"].shape
    assert rel_error(y, expected_y) <= BOUNDS[dtype]


# The golden cases of torch_cases.GPU_CASES (sizes, features, chunk sizes of
# a real layer, several chunks and a ragged last one), in the dtypes numpy
# has: their bfloat16 layers run in float16 here.
GOLDEN_CASES = [
    ("plain-f32", np.float32, 64, dict(batch=2, seqlen=100, nheads=4, headdim=8,
                                       ngroups=1, dstate=16), {}, {}),
    ("mamba2-f16", np.float16, 64, dict(batch=2, seqlen=150, nheads=4, headdim=16,
                                        ngroups=2, dstate=16),
     dict(D="h", z=True, dt_bias=True), dict(dt_softplus=True)),
    ("all-f16", np.float16, 64, dict(batch=2, seqlen=100, nheads=4, headdim=8,
                                     ngroups=2, dstate=16),
     dict(D="hp", z=True, dt_bias=True, initial_states=True),
     dict(dt_softplus=True, dt_limit=(0.001, 0.2), return_final_states=True)),
    ("seq-idx-f16", np.float16, 128, dict(batch=2, seqlen=200, nheads=4, headdim=8,
                                          ngroups=1, dstate=16),
     dict(D="h", initial_states=True, seq_idx_cuts=(37, 130)),
     dict(return_final_states=True)),
    ("varlen-f32", np.float32, 64, dict(batch=1, seqlen=150, nheads=4, headdim=8,
                                        ngroups=1, dstate=16),
     dict(dt_bias=True, initial_states=True, seq_idx_cuts=(40, 90),
          cu_seqlens=(0, 40, 90, 150)),
     dict(dt_softplus=True, return_final_states=True, return_varlen_states=True)),
]


@pytest.mark.parametrize("name,dtype,chunk,shape,inputs,call", GOLDEN_CASES,
                         ids=[c[0] for c in GOLDEN_CASES])
def test_golden_cases(name, dtype, chunk, shape, inputs, call):
    args = make_inputs(len(name) * 7919, dtype=dtype, **shape, **inputs)
    out = mamba_chunk_scan_combined(**args, chunk_size=chunk, **call)
    varlen = call.get("return_varlen_states", False)
    expected_y, expected_states = reference(
        args, dt_softplus=call.get("dt_softplus", False),
        dt_limit=call.get("dt_limit", (0.0, math.inf)), varlen=varlen)
    if varlen:
        y, final, states = out
        assert states.dtype == dtype
        assert rel_error(final, expected_states[-1:]) <= BOUNDS[dtype]
    elif call.get("return_final_states"):
        y, states = out
    else:
        y, states = out, None
    assert y.dtype == dtype and y.shape == args["x"].shape
    assert rel_error(y, expected_y) <= BOUNDS[dtype]
    if states is not None:
        assert rel_error(states, expected_states) <= BOUNDS[dtype]


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_varlen_states(dtype):
    cu = (0, 5, 5, 21, 37)  # an empty sequence in the middle
    args = make_inputs(3, 1, 37, 4, 4, 2, 8, dtype, D="h", initial_states=True,
                       seq_idx_cuts=(5, 21), cu_seqlens=cu)
    y, final, seqs = mamba_chunk_scan_combined(
        **args, chunk_size=8, dt_softplus=True, return_final_states=True,
        return_varlen_states=True)
    expected_y, expected_seqs = reference(args, dt_softplus=True, varlen=True)
    assert seqs.shape == (4, 4, 4, 8) and seqs.dtype == dtype  # C's dtype
    assert final.shape == (1, 4, 4, 8) and final.dtype == np.float32
    assert rel_error(y, expected_y) <= BOUNDS[dtype]
    assert rel_error(seqs, expected_seqs) <= BOUNDS[dtype]
    # The empty sequence starts from zero and so ends there.
    assert not np.any(seqs[1])
    # The row ends with its last sequence.
    assert rel_error(final, expected_seqs[-1:]) <= BOUNDS[dtype]
    # Without seq_idx the sequences are still computed from their starts;
    # int64 cu_seqlens are taken as int32.
    del args["seq_idx"]
    args["cu_seqlens"] = args["cu_seqlens"].astype(np.int64)
    y2, seqs2 = mamba_chunk_scan_combined(**args, chunk_size=8, dt_softplus=True,
                                          return_varlen_states=True)
    assert np.array_equal(y2, y) and np.array_equal(seqs2, seqs)


def test_cu_seqlens_ignored_without_varlen_states():
    args = small(cu_seqlens=(0, 3))  # mamba_ssm reads it only for varlen states
    y = mamba_chunk_scan_combined(**args, chunk_size=8)
    expected_y, _ = reference({k: v for k, v in args.items() if k != "cu_seqlens"})
    assert rel_error(y, expected_y) <= 1e-4


def test_other_float_dtypes_for_dt_and_parameters():
    # dt, A, D and dt_bias in float16 or float64 are computed in float32.
    args = small(D="h", z=True, dt_bias=True)
    mixed = dict(args, dt=args["dt"].astype(np.float16), A=args["A"].astype(np.float64),
                 D=args["D"].astype(np.float16), dt_bias=args["dt_bias"].astype(np.float64))
    y = mamba_chunk_scan_combined(**mixed, chunk_size=8, dt_softplus=True)
    expected_y, _ = reference({k: v.astype(np.float32) for k, v in mixed.items()},
                              dt_softplus=True)
    assert rel_error(y, expected_y) <= 1e-4


def test_layouts_are_copied_once_and_inputs_left_alone():
    # mamba_ssm's callers split one in_proj output into x, B, C views; also
    # Fortran order, a misaligned buffer and big-endian data: each is copied
    # into a C-order, aligned, native array; the caller's arrays are not written.
    b, L, h, p, g, n = 2, 37, 4, 4, 2, 8
    rng = np.random.default_rng(5)
    xbc = rng.standard_normal((b, L, h * p + 2 * g * n)).astype(np.float32)
    x = xbc[..., :h * p].reshape(b, L, h, p)
    B = xbc[..., h * p:h * p + g * n].reshape(b, L, g, n)
    C = xbc[..., h * p + g * n:].reshape(b, L, g, n)
    assert not x.flags.c_contiguous and not B.flags.c_contiguous
    dt = np.asfortranarray((rng.random((b, L, h)) * 0.1).astype(np.float32))
    raw = np.zeros(4 * h + 1, dtype=np.uint8)
    A = raw[1:].view(np.float32)
    A[:] = -rng.random(h)
    assert not A.flags.aligned
    before = xbc.copy()
    y = mamba_chunk_scan_combined(x, dt, A, B, C, 8)
    dense = [np.ascontiguousarray(a) for a in (x, dt, A, B, C)]
    assert np.array_equal(y, mamba_chunk_scan_combined(*dense, 8))
    assert np.array_equal(xbc, before)
    big = mamba_chunk_scan_combined(x.astype(">f4"), dt, A, B.astype(">f4"), C, 8)
    assert big.dtype == np.dtype("=f4") and np.array_equal(big, y)


def test_one_kernel_serves_every_batch_and_length():
    first = small(seed=1)
    mamba_chunk_scan_combined(**first, chunk_size=8)
    count = len(_combined.CPU_KERNELS)
    for batch, seqlen in [(1, 5), (3, 64)]:
        args = make_inputs(batch, batch, seqlen, 4, 4, 2, 8)
        y = mamba_chunk_scan_combined(**args, chunk_size=8)
        assert rel_error(y, reference(args)[0]) <= 1e-4
    assert len(_combined.CPU_KERNELS) == count


@pytest.mark.parametrize("setting, asked, runs", [
    (None, 8, 8), (None, 256, 64), ("requested", 128, 128), ("16", 8, 16)])
def test_cpu_chunk_size(monkeypatch, setting, asked, runs):
    # At most the CPU kernels' largest chunk size, as ssd_mlir.torch on CPU
    # tensors; $SSD_MLIR_CHUNK_SIZE says otherwise.
    if setting is None:
        monkeypatch.delenv(_combined.CHUNK_SIZE_ENV, raising=False)
    else:
        monkeypatch.setenv(_combined.CHUNK_SIZE_ENV, setting)
    compiled = []
    real = _combined.cpu_kernel
    monkeypatch.setattr(_combined, "cpu_kernel",
                        lambda spec: compiled.append(spec.chunk_size) or real(spec))
    args = small(seed=2)
    y = mamba_chunk_scan_combined(**args, chunk_size=asked)
    assert compiled == [runs]
    assert rel_error(y, reference(args)[0]) <= 1e-4
    monkeypatch.setenv(_combined.CHUNK_SIZE_ENV, "24")
    with pytest.raises(ValueError, match=r"\$SSD_MLIR_CHUNK_SIZE: expected 'tuned', "
                       r"'requested' or a power of two from 16 to 1024"):
        mamba_chunk_scan_combined(**args, chunk_size=asked)


def test_empty_sequence_passes_initial_states():
    args = make_inputs(0, 2, 0, 4, 4, 2, 8, initial_states=True)
    y, final = mamba_chunk_scan_combined(**args, chunk_size=8, return_final_states=True)
    assert y.shape == (2, 0, 4, 4) and final.dtype == np.float32
    assert np.array_equal(final, args["initial_states"])
    args = make_inputs(0, 1, 0, 4, 4, 2, 8, np.float16, initial_states=True,
                       cu_seqlens=(0, 0, 0))
    y, final, seqs = mamba_chunk_scan_combined(
        **args, chunk_size=8, return_final_states=True, return_varlen_states=True)
    assert seqs.shape == (2, 4, 4, 8) and seqs.dtype == np.float16
    assert np.array_equal(seqs[0], args["initial_states"][0].astype(np.float16))
    assert not np.any(seqs[1])


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_same_results_as_the_torch_op(dtype):
    # One kernel per spec serves both front ends: bit-identical outputs.
    torch = pytest.importorskip("torch")
    from ssd_mlir.torch import mamba_chunk_scan_combined as torch_op
    inputs, call = FEATURE_CASES["all"]
    args = small(getattr(np, dtype), seed=7, **inputs)
    y, final = mamba_chunk_scan_combined(**args, chunk_size=8, **call)
    ty, tfinal = torch_op(**{k: torch.from_numpy(v) for k, v in args.items()},
                          chunk_size=8, **call)
    assert np.array_equal(y, ty.numpy()) and np.array_equal(final, tfinal.numpy())


def _mutate(**changes):
    def apply(args):
        args.update(changes)
        return args
    return apply


ERRORS = [
    ("x-rank", lambda a: _mutate(x=a["x"][0])(a), ValueError,
     r"x: expected shape \(batch, seqlen, nheads, headdim\), got \(37, 4, 4\)"),
    ("x-dtype", lambda a: _mutate(x=a["x"].astype(np.float64))(a), TypeError,
     r"x: expected dtype float32 or float16 \(numpy has no bfloat16; ssd_mlir.torch "
     r"runs bfloat16\), got float64"),
    ("x-type", lambda a: _mutate(x=[1.0])(a), TypeError,
     r"x: expected a numpy.ndarray, got list"),
    ("dt-shape", lambda a: _mutate(dt=a["dt"][:, :-1])(a), ValueError,
     r"dt: expected shape \(batch, seqlen, nheads\) = \(2, 37, 4\), got \(2, 36, 4\)"),
    ("dt-int", lambda a: _mutate(dt=a["dt"].astype(np.int32))(a), TypeError,
     r"dt: expected a floating-point dtype, got int32"),
    ("A-shape", lambda a: _mutate(A=a["A"][:3])(a), ValueError,
     r"A: expected shape \(nheads,\) = \(4,\), got \(3,\)"),
    ("B-seqlen", lambda a: _mutate(B=a["B"][:, :36])(a), ValueError,
     r"B: expected shape \(batch, seqlen, ngroups, dstate\) = \(2, 37, 2, 8\), "
     r"got \(2, 36, 2, 8\)"),
    ("C-dtype", lambda a: _mutate(C=a["C"].astype(np.float16))(a), TypeError,
     r"C: expected dtype float32 \(x's dtype\), got float16"),
    ("groups", lambda a: _mutate(B=np.zeros((2, 37, 3, 8), np.float32),
                                 C=np.zeros((2, 37, 3, 8), np.float32))(a),
     ValueError, r"B: ngroups \(dimension 2\) = 3 must divide nheads = 4"),
    ("D-shape", lambda a: _mutate(D=np.ones((4, 5), np.float32))(a), ValueError,
     r"D: expected shape \(nheads,\) = \(4,\) or \(nheads, headdim\) = \(4, 4\), "
     r"got \(4, 5\)"),
    ("z-shape", lambda a: _mutate(z=a["x"][:, :, :2])(a), ValueError,
     r"z: expected shape \(batch, seqlen, nheads, headdim\) = \(2, 37, 4, 4\)"),
    ("z-dtype", lambda a: _mutate(z=a["x"].astype(np.float16))(a), TypeError,
     r"z: expected dtype float32 \(x's dtype\), got float16"),
    ("dt_bias-shape", lambda a: _mutate(dt_bias=np.zeros(2, np.float32))(a), ValueError,
     r"dt_bias: expected shape \(nheads,\) = \(4,\), got \(2,\)"),
    ("initial-shape", lambda a: _mutate(initial_states=np.zeros((2, 4, 4, 7)))(a),
     ValueError, r"initial_states: expected shape \(batch, nheads, headdim, dstate\) = "
                 r"\(2, 4, 4, 8\), got \(2, 4, 4, 7\)"),
    ("initial-int", lambda a: _mutate(initial_states=np.zeros((2, 4, 4, 8), np.int64))(a),
     TypeError, r"initial_states: expected a floating-point dtype, got int64"),
    ("seq_idx-dtype", lambda a: _mutate(seq_idx=np.zeros((2, 37), np.float32))(a),
     TypeError, r"seq_idx: expected dtype int32, got float32"),
    ("seq_idx-int16", lambda a: _mutate(seq_idx=np.zeros((2, 37), np.int16))(a),
     TypeError, r"seq_idx: expected dtype int32, got int16"),
    ("seq_idx-shape", lambda a: _mutate(seq_idx=np.zeros((1, 37), np.int32))(a),
     ValueError, r"seq_idx: expected shape \(batch, seqlen\) = \(2, 37\), got \(1, 37\)"),
    ("chunk-size", lambda a: _mutate(chunk_size=24)(a), ValueError,
     r"chunk_size: expected a power of two .* got 24"),
    ("chunk-size-type", lambda a: _mutate(chunk_size=8.0)(a), TypeError,
     r"chunk_size: expected an int, got float"),
    ("dt_limit", lambda a: _mutate(dt_limit=(0.5, 0.1))(a), ValueError,
     r"dt_limit: expected 0 <= low <= high, got \(0.5, 0.1\)"),
    ("varlen-no-cu", lambda a: _mutate(return_varlen_states=True)(a), ValueError,
     r"cu_seqlens: required when return_varlen_states is True"),
    ("varlen-cu-rank", lambda a: _mutate(return_varlen_states=True,
                                         cu_seqlens=np.zeros((1, 3), np.int32))(a),
     ValueError, r"cu_seqlens: expected shape \(num_sequences \+ 1,\) with at least "
                 r"one sequence, got \(1, 3\)"),
    ("varlen-batch", lambda a: _mutate(return_varlen_states=True,
                                       cu_seqlens=np.array([0, 37]))(a), ValueError,
     r"x: return_varlen_states needs batch 1 .* got batch 2"),
]


@pytest.mark.parametrize("mutate,error,message", [e[1:] for e in ERRORS],
                         ids=[e[0] for e in ERRORS])
def test_argument_errors(mutate, error, message):
    args = mutate(dict(small(), chunk_size=8))
    with pytest.raises(error, match=message):
        mamba_chunk_scan_combined(**args)


def test_bfloat16_is_refused_by_name():
    # numpy has no bfloat16; ml_dtypes' (where installed) is refused, naming it.
    ml_dtypes = pytest.importorskip("ml_dtypes")
    args = small()
    args["x"] = args["x"].astype(ml_dtypes.bfloat16)
    with pytest.raises(TypeError, match=r"numpy has no bfloat16.*got bfloat16"):
        mamba_chunk_scan_combined(**args, chunk_size=8)


@pytest.mark.parametrize("name", ["dt-shape", "B-seqlen", "groups", "D-shape",
                                  "initial-shape", "varlen-batch"])
def test_shape_errors_read_as_the_torch_ops(name):
    # One check serves both front ends: the same words for the same mistake.
    torch = pytest.importorskip("torch")
    from ssd_mlir.torch import mamba_chunk_scan_combined as torch_op
    mutate = next(e[1] for e in ERRORS if e[0] == name)
    args = mutate(dict(small(), chunk_size=8))
    with pytest.raises(ValueError) as numpy_error:
        mamba_chunk_scan_combined(**args)
    tensors = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v
               for k, v in args.items()}
    with pytest.raises(ValueError) as torch_error:
        torch_op(**tensors)
    assert str(numpy_error.value) == str(torch_error.value)


@pytest.mark.parametrize("cu,seq_cuts,message", [
    ((0, 10, 30), (10,), r"cu_seqlens: expected offsets from 0 to seqlen = 37, got 0 to 30"),
    ((0, 20, 10, 37), (10,),
     r"cu_seqlens: expected non-decreasing offsets, element 2 is 10 after 20"),
    ((0, 10, 37), (12,), r"seq_idx: .* change exactly where cu_seqlens starts a sequence "
                         r"\(at tokens \[10\]\), it changes at \[12\]"),
])
def test_cu_seqlens_values_are_checked(cu, seq_cuts, message):
    args = make_inputs(0, 1, 37, 4, 4, 2, 8, seq_idx_cuts=seq_cuts, cu_seqlens=cu)
    with pytest.raises(ValueError, match=message):
        mamba_chunk_scan_combined(**args, chunk_size=8, return_varlen_states=True)


def test_imports_and_runs_without_torch():
    # torch blocked: `import torch` raises ImportError in the child.
    script = textwrap.dedent("""
        import sys
        sys.modules["torch"] = None
        import numpy as np
        import ssd_mlir
        from ssd_mlir.numpy import mamba_chunk_scan_combined
        rng = np.random.default_rng(0)
        x = rng.standard_normal((1, 9, 2, 4)).astype(np.float32)
        dt = np.full((1, 9, 2), 0.1, np.float32)
        A = -np.ones(2, np.float32)
        B = rng.standard_normal((1, 9, 1, 8)).astype(np.float32)
        y, final = mamba_chunk_scan_combined(x, dt, A, B, B, 4, return_final_states=True)
        assert y.shape == x.shape and final.shape == (1, 2, 4, 8)
        assert np.isfinite(y).all() and np.abs(y).max() > 0
        assert ssd_mlir.numpy.mamba_chunk_scan_combined is mamba_chunk_scan_combined
        assert sys.modules["torch"] is None
        print("ok")
    """)
    package = str(pathlib.Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [package, *filter(None, [os.environ.get("PYTHONPATH")])]))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_triton_imported_after_a_cpu_kernel():
    # Regression: the CPU JIT once loaded MLIR's c_runner_utils RTLD_GLOBAL,
    # which put the system libLLVM into the global scope; importing Triton
    # (torch._dynamo does) afterwards then crashed in libtriton.so's own LLVM.
    # lib/CpuJit opens the runtime libraries RTLD_LOCAL now.
    pytest.importorskip("triton")
    script = textwrap.dedent("""
        import numpy as np
        from ssd_mlir.numpy import mamba_chunk_scan_combined
        x = np.ones((1, 9, 2, 4), np.float32)
        B = np.ones((1, 9, 1, 8), np.float32)
        mamba_chunk_scan_combined(x, np.full((1, 9, 2), 0.1, np.float32),
                                  -np.ones(2, np.float32), B, B, 4)
        import triton
    """)
    package = str(pathlib.Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [package, *filter(None, [os.environ.get("PYTHONPATH")])]))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
