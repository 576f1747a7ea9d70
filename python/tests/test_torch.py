"""ssd_mlir.torch on the CPU: signature, argument errors, numerics against
the project's reference, the kernel cache, torch.compile and autograd."""

import math

import pytest
import torch

import ssd_mlir
from ssd_mlir import _layer
from ssd_mlir.torch import layer_spec, mamba_chunk_scan_combined
from op_contract import FEATURE_CASES, assert_mamba_ssm_signature
from torch_cases import BOUNDS, make_inputs, reference, rel_error

SHAPE = dict(batch=2, seqlen=37, nheads=4, headdim=4, ngroups=2, dstate=8)


def small(dtype=torch.float32, seed=0, **features):
    return make_inputs(seed, dtype=dtype, **{**SHAPE, **features})


def test_lazy_attribute():
    assert ssd_mlir.torch.mamba_chunk_scan_combined is mamba_chunk_scan_combined


def test_signature_is_mamba_ssms():
    assert_mamba_ssm_signature(mamba_chunk_scan_combined)


def test_registered_as_custom_op():
    args = small()
    op = torch.ops.ssd_mlir.chunk_scan_combined.default
    y, final, seqs = op(args["x"], args["dt"], args["A"], args["B"], args["C"], 8,
                        None, None, None, None, None, None, False, 0.0, math.inf, False)
    assert y.shape == args["x"].shape and final.shape == (2, 4, 4, 8)
    assert seqs.shape == (0, 4, 4, 8)
    torch.library.opcheck(
        torch.ops.ssd_mlir.chunk_scan_combined.default,
        (args["x"], args["dt"], args["A"], args["B"], args["C"], 8, None, None,
         None, None, None, None, False, 0.0, math.inf, False),
        test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_static"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16],
                         ids=["f32", "bf16", "f16"])
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
        assert final.dtype == torch.float32 and final.shape == (2, 4, 4, 8)
        assert rel_error(final, expected_states) <= BOUNDS[dtype]
    else:
        assert isinstance(out, torch.Tensor)
        y = out
    assert y.dtype == dtype and y.shape == args["x"].shape
    assert rel_error(y, expected_y) <= BOUNDS[dtype]


@pytest.mark.parametrize("chunk_size", [1, 4, 16, 64])
def test_chunk_size_is_not_semantic(chunk_size):
    args = small(D="h", z=True, initial_states=True, seq_idx_cuts=(9,))
    y, final = mamba_chunk_scan_combined(**args, chunk_size=chunk_size,
                                         return_final_states=True)
    expected_y, expected_states = reference(args)
    assert rel_error(y, expected_y) <= 1e-4
    assert rel_error(final, expected_states) <= 1e-4


def test_kernel_chunk_size(monkeypatch):
    from ssd_mlir.torch import CHUNK_SIZE_ENV, TUNED_CHUNK_SIZE, kernel_chunk_size, kernel_spec
    args = small()
    monkeypatch.delenv(CHUNK_SIZE_ENV, raising=False)
    assert kernel_chunk_size(256) == TUNED_CHUNK_SIZE == 128
    assert kernel_spec(**args, chunk_size=8).chunk_size == TUNED_CHUNK_SIZE
    for setting, expected in (("tuned", 128), ("requested", 8), (" Requested ", 8), ("32", 32)):
        monkeypatch.setenv(CHUNK_SIZE_ENV, setting)
        assert kernel_chunk_size(8) == expected, setting
        assert kernel_spec(**args, chunk_size=8).chunk_size == expected, setting
    for setting in ("fast", "24", "0", "-64", "8", "2048"):
        monkeypatch.setenv(CHUNK_SIZE_ENV, setting)
        message = (rf"\$SSD_MLIR_CHUNK_SIZE: expected 'tuned', 'requested' or a power "
                   rf"of two from 16 to 1024 \(the GPU kernels' chunk sizes\), "
                   rf"got '{setting}'")
        with pytest.raises(ValueError, match=message):
            kernel_chunk_size(8)
        with pytest.raises(ValueError, match=message):
            mamba_chunk_scan_combined(**args, chunk_size=8)


@pytest.mark.parametrize("setting, asked, runs", [
    (None, 4, 4), (None, 256, 64), ("tuned", 128, 64), ("requested", 256, 256),
    ("32", 4, 32)])
def test_cpu_chunk_size(monkeypatch, setting, asked, runs):
    # CPU tensors run at most the CPU kernels' largest chunk size, whatever
    # the GPU kernels take; $SSD_MLIR_CHUNK_SIZE says otherwise.
    from ssd_mlir import _combined
    from ssd_mlir.torch import CHUNK_SIZE_ENV
    if setting is None:
        monkeypatch.delenv(CHUNK_SIZE_ENV, raising=False)
    else:
        monkeypatch.setenv(CHUNK_SIZE_ENV, setting)
    assert _combined.CPU_MAX_CHUNK_SIZE == 64
    compiled = []
    real = _combined.cpu_kernel
    monkeypatch.setattr(_combined, "cpu_kernel",
                        lambda spec: compiled.append(spec.chunk_size) or real(spec))
    args = small()
    y, final = mamba_chunk_scan_combined(**args, chunk_size=asked,
                                         return_final_states=True)
    assert compiled == [runs]
    expected_y, expected_states = reference(args)
    assert rel_error(y, expected_y) <= 1e-4
    assert rel_error(final, expected_states) <= 1e-4


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_varlen_states(dtype):
    cu = (0, 5, 5, 21, 37)  # an empty sequence in the middle
    args = make_inputs(3, 1, 37, 4, 4, 2, 8, dtype, D="h", initial_states=True,
                       seq_idx_cuts=(5, 21), cu_seqlens=cu)
    y, final, seqs = mamba_chunk_scan_combined(
        **args, chunk_size=8, dt_softplus=True, return_final_states=True,
        return_varlen_states=True)
    expected_y, expected_seqs = reference(args, dt_softplus=True, varlen=True)
    assert seqs.shape == (4, 4, 4, 8) and seqs.dtype == dtype
    assert final.shape == (1, 4, 4, 8) and final.dtype == torch.float32
    assert rel_error(y, expected_y) <= BOUNDS[dtype]
    assert rel_error(seqs, expected_seqs) <= BOUNDS[dtype]
    # The empty sequence starts from zero and so ends there.
    assert torch.count_nonzero(seqs[1]) == 0
    # The row ends with its last sequence.
    assert rel_error(final, expected_seqs[-1:]) <= BOUNDS[dtype]
    # Without seq_idx the sequences are still computed from their starts.
    del args["seq_idx"]
    y2, seqs2 = mamba_chunk_scan_combined(**args, chunk_size=8, dt_softplus=True,
                                          return_varlen_states=True)
    assert torch.equal(y2, y) and torch.equal(seqs2, seqs)


def test_cu_seqlens_ignored_without_varlen_states():
    args = small(cu_seqlens=(0, 3))  # mamba_ssm reads it only for varlen states
    y = mamba_chunk_scan_combined(**args, chunk_size=8)
    expected_y, _ = reference({k: v for k, v in args.items() if k != "cu_seqlens"})
    assert rel_error(y, expected_y) <= 1e-4


def test_low_precision_dt_and_parameters():
    args = small(D="h", dt_bias=True, initial_states=True)
    half = {k: (v.to(torch.bfloat16) if k in ("dt", "A", "D", "dt_bias", "initial_states")
                else v) for k, v in args.items()}
    y, final = mamba_chunk_scan_combined(**half, chunk_size=8, return_final_states=True)
    expected_y, expected_states = reference({k: v.float() for k, v in half.items()})
    assert rel_error(y, expected_y) <= 1e-4
    assert rel_error(final, expected_states) <= 1e-4


def test_strided_views_are_accepted():
    # mamba_ssm's callers split one in_proj output into x, B, C views.
    b, L, h, p, g, n = 2, 37, 4, 4, 2, 8
    gen = torch.Generator().manual_seed(5)
    xbc = torch.randn(b, L, h * p + 2 * g * n, generator=gen)
    x, B, C = torch.split(xbc, [h * p, g * n, g * n], dim=-1)
    x, B, C = x.view(b, L, h, p), B.view(b, L, g, n), C.view(b, L, g, n)
    assert not x.is_contiguous()
    dt = torch.rand(b, L, h, generator=gen) * 0.1
    A = -torch.rand(h, generator=gen)
    y = mamba_chunk_scan_combined(x, dt, A, B, C, 8)
    y_dense = mamba_chunk_scan_combined(x.contiguous(), dt, A, B.contiguous(),
                                        C.contiguous(), 8)
    assert torch.equal(y, y_dense)


def test_views_the_kernels_read_in_place():
    # The rule a GPU artifact's `inner_contiguous` tensors follow (checked
    # here on host tensors: it reads only sizes, strides and addresses).
    from ssd_mlir.torch import _as_taken, _takes_view
    rows = torch.zeros(3, 40, 24 + 8, dtype=torch.bfloat16)  # 64-byte rows
    x = rows[..., :24].view(3, 40, 3, 8)  # 16-byte head rows
    assert _takes_view(x, "inner_contiguous", 16)
    assert _as_taken(x, "inner_contiguous", 16) is x
    # A contiguous layout, or rows that do not keep the alignment, take a copy.
    assert not _takes_view(x, "contiguous", 16)
    dense = _as_taken(x, "contiguous", 16)
    assert dense.is_contiguous() and torch.equal(dense, x)
    odd = torch.zeros(3, 40, 25, dtype=torch.bfloat16)[..., :24]  # 50-byte rows
    assert not _takes_view(odd, "inner_contiguous", 16)
    assert _as_taken(odd, "inner_contiguous", 16).is_contiguous()
    # Rows of 4 channels start on 8-byte boundaries when dense (the kernels
    # are built for that): dense such tensors, and views that keep 8-byte
    # rows, are taken; 4-byte rows are not.
    small = torch.zeros(3, 40, 2, 4, dtype=torch.bfloat16)
    assert _takes_view(small, "inner_contiguous", 16)
    wide = torch.zeros(3, 40, 12, dtype=torch.bfloat16)[..., :8].view(3, 40, 2, 4)
    assert _takes_view(wide, "inner_contiguous", 16)
    narrow = torch.zeros(3, 40, 10, dtype=torch.bfloat16)[..., :8].view(3, 40, 2, 4)
    assert not _takes_view(narrow, "inner_contiguous", 16)
    # The innermost dimension must be dense; a size-1 dimension's stride is
    # never stepped over.
    assert not _takes_view(rows.transpose(1, 2), "inner_contiguous", 16)
    assert _takes_view(rows[:1, :, :8].expand(1, 40, 8), "inner_contiguous", 16)
    # A misaligned base is copied to an aligned one.
    shifted = torch.zeros(200, dtype=torch.bfloat16)[1:97].view(4, 24)
    assert shifted.data_ptr() % 16
    fixed = _as_taken(shifted, "inner_contiguous", 16)
    assert fixed.data_ptr() % 16 == 0 and torch.equal(fixed, shifted)


def test_one_kernel_serves_every_batch_and_length():
    from ssd_mlir import torch as op_module
    first = small(D="h", seed=1)
    mamba_chunk_scan_combined(**first, chunk_size=8)
    count = len(op_module._cpu_kernels)
    for batch, seqlen in [(1, 5), (3, 64), (2, 200)]:
        args = make_inputs(batch, batch, seqlen, 4, 4, 2, 8, torch.float32, D="h")
        y = mamba_chunk_scan_combined(**args, chunk_size=8)
        assert rel_error(y, reference(args)[0]) <= 1e-4
    assert len(op_module._cpu_kernels) == count


def test_empty_sequence_passes_initial_states():
    args = make_inputs(0, 2, 0, 4, 4, 2, 8, torch.float32, initial_states=True)
    y, final = mamba_chunk_scan_combined(**args, chunk_size=8, return_final_states=True)
    assert y.shape == (2, 0, 4, 4)
    assert torch.equal(final, args["initial_states"])


def test_torch_compile_fullgraph():
    args = small(D="h", z=True, dt_bias=True)

    def layer(x, dt, A, B, C, D, z, dt_bias):
        y, final = mamba_chunk_scan_combined(x, dt, A, B, C, 8, D=D, z=z,
                                             dt_bias=dt_bias, dt_softplus=True,
                                             return_final_states=True)
        return y * 2.0, final.sum()

    compiled = torch.compile(layer, fullgraph=True, backend="aot_eager")
    eager = layer(**args)
    traced = compiled(**args)
    assert torch.equal(traced[0], eager[0]) and torch.equal(traced[1], eager[1])


def test_backward_names_the_missing_piece():
    args = small()
    args["x"].requires_grad_(True)
    y = mamba_chunk_scan_combined(**args, chunk_size=8)
    with pytest.raises(NotImplementedError, match="no backward.*dx, ddt, dA"):
        y.sum().backward()


def _mutate(**changes):
    def apply(args):
        args.update(changes)
        return args
    return apply


ERRORS = [
    ("x-rank", lambda a: _mutate(x=a["x"][0])(a), ValueError,
     r"x: expected shape \(batch, seqlen, nheads, headdim\), got \(37, 4, 4\)"),
    ("x-dtype", lambda a: _mutate(x=a["x"].double())(a), TypeError,
     r"x: expected dtype torch.float32, torch.bfloat16 or torch.float16, got torch.float64"),
    ("x-type", lambda a: _mutate(x=[1.0])(a), TypeError, r"x: expected a torch.Tensor, got list"),
    ("dt-shape", lambda a: _mutate(dt=a["dt"][:, :-1])(a), ValueError,
     r"dt: expected shape \(batch, seqlen, nheads\) = \(2, 37, 4\), got \(2, 36, 4\)"),
    ("dt-int", lambda a: _mutate(dt=a["dt"].int())(a), TypeError,
     r"dt: expected a floating-point dtype, got torch.int32"),
    ("A-shape", lambda a: _mutate(A=a["A"][:3])(a), ValueError,
     r"A: expected shape \(nheads,\) = \(4,\), got \(3,\)"),
    ("B-seqlen", lambda a: _mutate(B=a["B"][:, :36])(a), ValueError,
     r"B: expected shape \(batch, seqlen, ngroups, dstate\) = \(2, 37, 2, 8\), got \(2, 36, 2, 8\)"),
    ("C-dtype", lambda a: _mutate(C=a["C"].half())(a), TypeError,
     r"C: expected dtype torch.float32 \(x's dtype\), got torch.float16"),
    ("groups", lambda a: _mutate(B=a["B"][:, :, :1].expand(2, 37, 3, 8),
                                 C=a["C"][:, :, :1].expand(2, 37, 3, 8))(a),
     ValueError, r"B: ngroups \(dimension 2\) = 3 must divide nheads = 4"),
    ("D-shape", lambda a: _mutate(D=torch.ones(4, 5))(a), ValueError,
     r"D: expected shape \(nheads,\) = \(4,\) or \(nheads, headdim\) = \(4, 4\), got \(4, 5\)"),
    ("z-shape", lambda a: _mutate(z=a["x"][:, :, :2])(a), ValueError,
     r"z: expected shape \(batch, seqlen, nheads, headdim\) = \(2, 37, 4, 4\)"),
    ("z-dtype", lambda a: _mutate(z=a["x"].bfloat16())(a), TypeError,
     r"z: expected dtype torch.float32 \(x's dtype\), got torch.bfloat16"),
    ("dt_bias-shape", lambda a: _mutate(dt_bias=torch.zeros(2))(a), ValueError,
     r"dt_bias: expected shape \(nheads,\) = \(4,\), got \(2,\)"),
    ("initial-shape", lambda a: _mutate(initial_states=torch.zeros(2, 4, 4, 7))(a), ValueError,
     r"initial_states: expected shape \(batch, nheads, headdim, dstate\) = \(2, 4, 4, 8\), got \(2, 4, 4, 7\)"),
    ("seq_idx-dtype", lambda a: _mutate(seq_idx=torch.zeros(2, 37))(a), TypeError,
     r"seq_idx: expected dtype torch.int32, got torch.float32"),
    ("seq_idx-shape", lambda a: _mutate(seq_idx=torch.zeros(1, 37, dtype=torch.int32))(a),
     ValueError, r"seq_idx: expected shape \(batch, seqlen\) = \(2, 37\), got \(1, 37\)"),
    ("device", lambda a: _mutate(A=a["A"].to("meta"))(a), ValueError,
     r"A: expected a tensor on cpu \(x's device\), got meta"),
    ("chunk-size", lambda a: _mutate(chunk_size=24)(a), ValueError,
     r"chunk_size: expected a power of two .* got 24"),
    ("chunk-size-type", lambda a: _mutate(chunk_size=8.0)(a), TypeError,
     r"chunk_size: expected an int, got float"),
    ("dt_limit", lambda a: _mutate(dt_limit=(0.5, 0.1))(a), ValueError,
     r"dt_limit: expected 0 <= low <= high, got \(0.5, 0.1\)"),
    ("varlen-no-cu", lambda a: _mutate(return_varlen_states=True)(a), ValueError,
     r"cu_seqlens: required when return_varlen_states is True"),
    ("varlen-batch", lambda a: _mutate(return_varlen_states=True,
                                       cu_seqlens=torch.tensor([0, 37]))(a), ValueError,
     r"x: return_varlen_states needs batch 1 .* got batch 2"),
]


@pytest.mark.parametrize("mutate,error,message", [e[1:] for e in ERRORS],
                         ids=[e[0] for e in ERRORS])
def test_argument_errors(mutate, error, message):
    args = mutate(dict(small(), chunk_size=8))
    with pytest.raises(error, match=message):
        mamba_chunk_scan_combined(**args)


def test_checks_are_kept_by_what_they_read(monkeypatch):
    from ssd_mlir import torch as op_module
    monkeypatch.setattr(op_module, "_checked_calls", {})
    args = dict(small(D="h", dt_bias=True), chunk_size=8)
    args["D"] = torch.nn.Parameter(args["D"])  # As a model holds it.

    def check(**changes):
        a = {**args, **changes}
        return op_module._checked_call(
            a["x"], a["dt"], a["A"], a["B"], a["C"], a["chunk_size"], a["D"], None,
            a["dt_bias"], None, None, None, True, (0.0, math.inf), False)

    first = check()
    assert check() is first and len(op_module._checked_calls) == 1
    # Other tensors with the same shapes, dtypes and devices: the same check.
    assert check(x=args["x"].clone(), dt=args["dt"] * 2) is first
    # Anything the checks read is part of the key: refused every time.
    for _ in range(2):
        with pytest.raises(TypeError, match=r"C: expected dtype torch.float32"):
            check(C=args["C"].half())
        with pytest.raises(ValueError, match=r"chunk_size: expected a power of two"):
            check(chunk_size=24)
    longer = small(seed=1, seqlen=64)
    assert check(x=longer["x"], dt=longer["dt"], B=longer["B"],
                 C=longer["C"]).seqlen == 64
    # The kernel's chunk size follows $SSD_MLIR_CHUNK_SIZE.
    monkeypatch.setenv("SSD_MLIR_CHUNK_SIZE", "requested")
    assert check().spec.chunk_size == 8
    monkeypatch.setenv("SSD_MLIR_CHUNK_SIZE", "64")
    assert check().spec.chunk_size == 64
    # A tensor subclass is checked in full and not kept.
    kept = len(op_module._checked_calls)

    class Marked(torch.Tensor):
        pass

    assert check(A=args["A"].as_subclass(Marked)).nheads == 4
    assert len(op_module._checked_calls) == kept


@pytest.mark.parametrize("cu,seq_cuts,message", [
    ((0, 10, 30), (10,), r"cu_seqlens: expected offsets from 0 to seqlen = 37, got 0 to 30"),
    ((0, 20, 10, 37), (10,), r"cu_seqlens: expected non-decreasing offsets, element 2 is 10 after 20"),
    ((0, 10, 37), (12,), r"seq_idx: .* change exactly where cu_seqlens starts a sequence "
                         r"\(at tokens \[10\]\), it changes at \[12\]"),
])
def test_cu_seqlens_values_are_checked(cu, seq_cuts, message):
    args = make_inputs(0, 1, 37, 4, 4, 2, 8, torch.float32, seq_idx_cuts=seq_cuts,
                       cu_seqlens=cu)
    with pytest.raises(ValueError, match=message):
        mamba_chunk_scan_combined(**args, chunk_size=8, return_varlen_states=True)


def test_c_kernel_checks_its_arguments():
    # The C API refuses what the Python wrapper would have caught, rather
    # than running on it: a wrong dtype, a wrong size, bad cu_seqlens.
    args = make_inputs(0, 1, 12, 2, 4, 1, 8, torch.float32, cu_seqlens=(0, 5, 12))
    spec = layer_spec(args["x"], args["B"], 8, varlen=True)
    kernel = _layer.CpuKernel(spec)
    y = torch.empty(1, 12, 2, 4)
    states = torch.empty(2, 2, 4, 8)

    def run(**override):
        tensors = {name: args[name] for name in ("x", "dt", "A", "B", "C", "cu_seqlens")}
        tensors.update(y=y, final_states=states)
        tensors.update(override)
        codes = {torch.float32: "f32", torch.int32: "i32", torch.float16: "f16"}
        kernel.run([_layer.HostTensor(n, t.data_ptr(), codes[t.dtype], tuple(t.shape))
                    for n, t in tensors.items()])

    run()
    with pytest.raises(_layer.LayerError, match=r"tensor 'x': dtype f16, expected f32"):
        run(x=args["x"].half())
    with pytest.raises(_layer.LayerError,
                       match=r"tensor 'B': shape \(1, 11, 1, 8\), expected \(1, 12, 1, 8\)"):
        run(B=args["B"][:, :11].contiguous())
    with pytest.raises(_layer.LayerError, match=r"cu_seqlens': must end at seqlen 12, ends at 13"):
        run(cu_seqlens=torch.tensor([0, 5, 13], dtype=torch.int32))
    with pytest.raises(_layer.LayerError, match=r"tensor 'seq_idx' is not an argument"):
        run(seq_idx=torch.zeros(1, 12, dtype=torch.int32))


def _ssd_compile():
    import os
    import pathlib
    lib = pathlib.Path(os.environ.get("SSD_MLIR_LIB") or
                       pathlib.Path(__file__).resolve().parents[2] / "build" / "lib")
    return (lib if lib.is_dir() else lib.parent).parent / "bin" / "ssd-compile"


def test_gpu_artifacts_compiled_cached_and_found(tmp_path, monkeypatch):
    # The GPU path's artifact lookup, without a GPU: compiled on demand into
    # $SSD_MLIR_CACHE, loadable by the runtime, the same as the ssd-compile
    # command the error would print, and taken from $SSD_MLIR_ARTIFACTS first.
    import shlex
    import subprocess
    from ssd_mlir import _runtime, torch as op_module
    from ssd_mlir.torch import artifact_name, compile_command, kernel_spec
    monkeypatch.setenv("SSD_MLIR_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SSD_MLIR_ARTIFACTS", raising=False)
    args = small(D="hp", z=True, dt_bias=True)
    spec = kernel_spec(**args, chunk_size=64, dt_softplus=True, dt_limit=(0.0, 0.5))
    name = artifact_name(spec, "sm_90a")
    folder = op_module._find_or_compile(spec, "sm_90a")
    assert folder == str(tmp_path / "cache" / name)
    assert _runtime.Artifact(folder).target == "sm_90a"
    command = shlex.split(compile_command(spec, "sm_90a", str(tmp_path / "cli")))
    assert command[0] == "ssd-compile" and "--dt-limit" in command
    subprocess.run([str(_ssd_compile()), *command[1:]], check=True)
    for file in ("manifest.json", "kernels.cubin"):
        assert (tmp_path / "cli" / name / file).read_bytes() == \
            (tmp_path / "cache" / name / file).read_bytes()
    monkeypatch.setenv("SSD_MLIR_ARTIFACTS", str(tmp_path / "cli"))
    assert op_module._find_or_compile(spec, "sm_90a") == str(tmp_path / "cli" / name)


def test_missing_artifact_without_compiler_names_ssd_compile(tmp_path, monkeypatch):
    from ssd_mlir import _layer as layer_module, torch as op_module
    from ssd_mlir._library import LibraryNotFoundError
    from ssd_mlir.torch import ArtifactNotFoundError, kernel_spec

    def no_library():
        raise LibraryNotFoundError("not here")

    monkeypatch.setattr(layer_module, "lib", no_library)
    monkeypatch.setenv("SSD_MLIR_ARTIFACTS", str(tmp_path))
    monkeypatch.setenv("SSD_MLIR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SSD_MLIR_CHUNK_SIZE", "requested")
    spec = kernel_spec(**small(D="h"), chunk_size=64)
    with pytest.raises(ArtifactNotFoundError,
                       match=r"(?s)no SSD-MLIR artifact h4-p4-n8-g2-q64-f32-sf32-D-sm_90a .*"
                             r"ssd-compile --nheads 4 --headdim 4 --dstate 8 --ngroups 2 "
                             r"--chunk-size 64 --dtype f32 --state-dtype f32 --features D "
                             r"--target sm_90a -o \$SSD_MLIR_ARTIFACTS/h4-p4-n8-g2.*"
                             r"chunk 64 is the chunk size the kernels run: see "
                             r"\$SSD_MLIR_CHUNK_SIZE"):
        op_module._find_or_compile(spec, "sm_90a")


def test_threaded_cpu_kernel(monkeypatch):
    # SSD_MLIR_CPU_THREADS compiles a kernel whose chunk loops run on threads.
    from ssd_mlir import torch as op_module
    monkeypatch.setenv("SSD_MLIR_CPU_THREADS", "2")
    args = make_inputs(1, 2, 300, 4, 4, 2, 8, torch.float32, D="h", initial_states=True,
                       seq_idx_cuts=(100,))
    y, final = mamba_chunk_scan_combined(**args, chunk_size=16, return_final_states=True)
    expected_y, expected_states = reference(args)
    assert rel_error(y, expected_y) <= 1e-4
    assert rel_error(final, expected_states) <= 1e-4
    assert any(threads == 2 for _, threads in op_module._cpu_kernels)
