"""mamba_ssm's mamba_chunk_scan_combined signature, which ssd_mlir.torch and
ssd_mlir.numpy both keep."""

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
