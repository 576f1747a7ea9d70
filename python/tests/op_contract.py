"""What ssd_mlir.torch and ssd_mlir.numpy are both held to: mamba_ssm's
mamba_chunk_scan_combined signature, and the feature cases each is checked
on against the reference."""

import inspect
import math
from typing import Any, Callable

PARAMETERS = [
    "x", "dt", "A", "B", "C", "chunk_size", "D", "z", "dt_bias",
    "initial_states", "seq_idx", "cu_seqlens", "dt_softplus", "dt_limit",
    "return_final_states", "return_varlen_states"]

DEFAULTS = {
    "D": None, "z": None, "dt_bias": None, "initial_states": None,
    "seq_idx": None, "cu_seqlens": None, "dt_softplus": False,
    "dt_limit": (0.0, math.inf), "return_final_states": False,
    "return_varlen_states": False}


def assert_mamba_ssm_signature(function: Callable[..., Any]) -> None:
    params = inspect.signature(function).parameters
    assert list(params) == PARAMETERS
    defaults = {k: p.default for k, p in params.items()
                if p.default is not inspect.Parameter.empty}
    assert defaults == DEFAULTS


# Every optional input and flag: (inputs of make_inputs / small, call
# arguments); each op runs them in the dtypes it has.
FEATURE_CASES = {
    "plain": ({}, {}),
    "D-z-bias-softplus": (dict(D="h", z=True, dt_bias=True), dict(dt_softplus=True)),
    "Dhp-limit-initial": (dict(D="hp", initial_states=True),
                          dict(dt_limit=(0.02, 0.15), return_final_states=True)),
    "seq_idx-initial": (dict(initial_states=True, seq_idx_cuts=(5, 20)),
                        dict(return_final_states=True)),
    "all": (dict(D="hp", z=True, dt_bias=True, initial_states=True, seq_idx_cuts=(11,)),
            dict(dt_softplus=True, dt_limit=(0.0, 0.3), return_final_states=True)),
}
