"""ssd_mlir.transformers on the CPU: a tiny Hugging Face Mamba-2 model with its
SSD routed to ssd_mlir's op, against the same model on transformers' own
torch SSD. Skipped where transformers is not installed.

Bounds, max|out - expected| / max|expected| over the logits:
  float32  1e-4: the op's own float32 bound. Only the SSD differs between the
           two runs and both compute it in float32; measured 3e-7.
  bfloat16 1.5e-2, the project's bf16 bound, for every layer's SSD (y and
           final states against transformers' torch SSD in float32 on the
           same inputs) and for the logits against the bf16 model on the
           torch path (measured 9e-3: more than the SSD differs there,
           transformers' torch SSD hands y to the gated norm in float32,
           ssd_mlir's op, as mamba_ssm's, in bf16); against the float32
           model, twice the bf16 torch path's own distance from it.
"""

import importlib
import math

import pytest
import torch

transformers = pytest.importorskip("transformers")

from hf_cases import TINY, checking, make_model, rel_error  # noqa: E402
from ssd_mlir import torch as op_module  # noqa: E402
from ssd_mlir import transformers as hf  # noqa: E402
from ssd_mlir.torch import mamba_chunk_scan_combined  # noqa: E402

BATCH, SEQLEN = 2, 100  # not a multiple of the chunk (16): a partial last chunk


@pytest.fixture(scope="module")
def model():
    return make_model(TINY, seed=0)


@pytest.fixture(scope="module")
def ids():
    return torch.randint(0, TINY["vocab_size"], (BATCH, SEQLEN),
                         generator=torch.Generator().manual_seed(1))


def logits(model, ids, **kwargs):
    with torch.no_grad():
        return model(ids, **kwargs).logits


def counting(scan):
    calls = []

    def wrapper(*args, **kwargs):
        calls.append(kwargs)
        return scan(*args, **kwargs)

    return wrapper, calls


@pytest.mark.parametrize("use_cache", [False, True], ids=["no-cache", "cache"])
def test_float32_logits_match_the_torch_path(model, ids, use_cache):
    expected = logits(model, ids, use_cache=use_cache)
    with hf.route_ssd():
        out = logits(model, ids, use_cache=use_cache)
    assert rel_error(out, expected) <= 1e-4
    # The kernel the mixers asked for: the model's layer, with D, dt_bias and
    # the softplus of every Mamba-2 mixer.
    specs = [spec for spec, _ in op_module._cpu_kernels]
    assert any(s.nheads == 8 and s.headdim == 16 and s.dstate == 16 and s.ngroups == 2
               and s.chunk_size == 16 and s.dtype == "f32"
               and s.features == ("D", "dt_bias", "softplus") for s in specs)


def test_every_layer_calls_the_routed_scan(model, ids):
    scan, calls = counting(mamba_chunk_scan_combined)
    expected = logits(model, ids)
    with hf.route_ssd(scan):
        out = logits(model, ids)
    assert len(calls) == TINY["num_hidden_layers"]
    assert all(c["chunk_size"] == 16 and c["dt_softplus"] and c["D"] is not None
               and c["dt_bias"] is not None for c in calls)
    assert all(c["return_final_states"] for c in calls)  # the cache's states
    assert rel_error(out, expected) <= 1e-4


def test_bfloat16_logits_within_the_bf16_bound(model, ids):
    reference = logits(model, ids, use_cache=False)
    low = make_model(TINY, seed=0, dtype=torch.bfloat16)
    low.load_state_dict(model.state_dict())
    expected = logits(low, ids, use_cache=False)
    errors = []
    with hf.route_ssd(checking(mamba_chunk_scan_combined, errors)):
        out = logits(low, ids, use_cache=False)
    assert len(errors) == TINY["num_hidden_layers"]
    assert max(e["y"] for e in errors) <= 1.5e-2
    assert max(e["states"] for e in errors) <= 1.5e-2
    assert rel_error(out, expected) <= 1.5e-2
    assert any(spec.dtype == "bf16" for spec, _ in op_module._cpu_kernels)
    # Against the float32 model: the same order as the bf16 torch path's own error.
    assert rel_error(out, reference) <= 2 * max(rel_error(expected, reference), 1.5e-2)


def test_generation_continues_from_the_routed_prefill_states(model, ids):
    # Prefill through the routed op (its final states fill the cache), then
    # decode steps on transformers' recurrent update: the same tokens and
    # the same step logits as an unrouted generate.
    def generate():
        with torch.no_grad():
            return model.generate(ids[:1, :40], max_new_tokens=4, do_sample=False,
                                  output_logits=True, return_dict_in_generate=True,
                                  pad_token_id=0)

    expected = generate()
    with hf.route_ssd():
        out = generate()
    assert torch.equal(out.sequences, expected.sequences)
    for step, (a, b) in enumerate(zip(out.logits, expected.logits)):
        assert rel_error(a, b) <= 1e-4, f"step {step}"


def test_the_original_functions_come_back(model, ids):
    module = hf.modeling_module()
    chunk, fused = module.mamba2_chunk_scan, module.mamba2_split_conv1d_scan_combined
    with pytest.raises(RuntimeError, match="inside"):
        with hf.route_ssd() as routed:
            assert module.mamba2_chunk_scan is routed
            assert module.mamba2_split_conv1d_scan_combined is not fused
            raise RuntimeError("inside")
    assert module.mamba2_chunk_scan is chunk
    assert module.mamba2_split_conv1d_scan_combined is fused


def test_training_mode_takes_the_routed_path(model, ids):
    # The fused training kernel is switched off in the block: a training
    # forward runs the routed op, whose missing backward then says so.
    scan, calls = counting(mamba_chunk_scan_combined)
    model.train()
    try:
        with hf.route_ssd(scan):
            loss = model(ids, labels=ids).loss
        assert len(calls) == TINY["num_hidden_layers"]
        with pytest.raises(NotImplementedError, match="no backward"):
            loss.backward()
    finally:
        model.eval()
        model.zero_grad(set_to_none=True)


def test_routed_arguments_are_mamba_ssms():
    # Positional or keyword, the stand-in calls scan with mamba_ssm's names,
    # dt_limit as floats, and drops what mamba_ssm's op does not take.
    seen = {}

    def scan(x, dt, A, B, C, **kwargs):
        seen.update(kwargs)
        return x

    routed = hf.routed(scan)
    routed(1, 2, 3, 4, 5, 16, D=6, dt_limit=[0, math.inf], dt_softplus=True,
           attention_mask="dropped")
    assert seen == {"chunk_size": 16, "D": 6, "dt_limit": (0.0, math.inf),
                    "dt_softplus": True}
    seen.clear()
    routed(1, 2, 3, 4, 5, 16, 6, None, 7)  # chunk_size, D, z, dt_bias
    assert seen == {"chunk_size": 16, "D": 6, "z": None, "dt_bias": 7}


def test_missing_transformers_is_a_clear_error(monkeypatch):
    real = importlib.import_module

    def no_transformers(name, *args):
        if name.startswith("transformers"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real(name, *args)

    monkeypatch.setattr(hf.importlib, "import_module", no_transformers)
    with pytest.raises(hf.UnsupportedTransformersError,
                       match=r"needs Hugging Face transformers .*not installed.* `pip install 'transformers>=5'`"):
        with hf.route_ssd():
            pass


def test_a_mixer_without_the_routed_call_is_refused(monkeypatch):
    module = hf.modeling_module()
    monkeypatch.delattr(module, "mamba2_chunk_scan")
    with pytest.raises(hf.UnsupportedTransformersError,
                       match=rf"transformers {transformers.__version__}: .* lacks mamba2_chunk_scan"):
        hf.modeling_module()


def test_a_mixer_that_does_not_call_it_is_refused(monkeypatch):
    module = hf.modeling_module()

    class OldMixer:  # 4.x: the forward picks cuda_kernels_forward or torch_forward
        def forward(self, hidden_states):
            return self.torch_forward(hidden_states)

    monkeypatch.setattr(module, "Mamba2Mixer", OldMixer)
    with pytest.raises(hf.UnsupportedTransformersError,
                       match=r"lacks Mamba2Mixer.forward calling mamba2_chunk_scan"):
        hf.modeling_module()



# A 5.25-shaped mixer: forward calls a module function (there
# mamba2_scan_forward) that calls mamba2_chunk_scan. The names are read from
# the code, never run; the test installs scan_step into modeling_mamba2.
def scan_step(hidden_states):
    return mamba2_chunk_scan(hidden_states)  # noqa: F821


class IndirectMixer:
    def forward(self, hidden_states):
        return scan_step(hidden_states)


class UnrelatedMixer:
    def forward(self, hidden_states):
        return unrelated_step(hidden_states)  # noqa: F821


def test_a_mixer_calling_it_through_a_module_function_is_accepted(monkeypatch):
    module = hf.modeling_module()
    monkeypatch.setattr(module, "scan_step", scan_step, raising=False)
    monkeypatch.setattr(module, "Mamba2Mixer", IndirectMixer)
    assert hf.modeling_module() is module
    monkeypatch.setattr(module, "Mamba2Mixer", UnrelatedMixer)
    with pytest.raises(hf.UnsupportedTransformersError,
                       match=r"lacks Mamba2Mixer.forward calling mamba2_chunk_scan"):
        hf.modeling_module()
