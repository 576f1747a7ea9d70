"""mamba_ssm's Triton mamba_chunk_scan_combined from the files fetch.sh
extracts into CACHE/mamba, without its packages' __init__.py (which imports
the CUDA extensions selective_scan_cuda, causal_conv1d, ...): empty packages
whose path is the folder of the extracted files. Used by run_anchors.py and
by the transformers client's GPU test (python/tests/hf_cases.py)."""
import os
import sys
import types


def mamba_chunk_scan_combined_from(cache):
    if "mamba_ssm.ops.triton.ssd_combined" in sys.modules:
        return sys.modules["mamba_ssm.ops.triton.ssd_combined"].mamba_chunk_scan_combined
    root = os.path.join(cache, "mamba")
    combined = os.path.join(root, "mamba_ssm", "ops", "triton", "ssd_combined.py")
    if not os.path.isfile(combined):
        raise FileNotFoundError(
            f"{combined} is missing: run bench/anchors/fetch.sh where PyPI is reachable "
            "and carry bench/anchors/.cache")
    for name in ("mamba_ssm", "mamba_ssm.ops", "mamba_ssm.ops.triton", "mamba_ssm.utils"):
        if name in sys.modules:
            continue
        module = types.ModuleType(name)
        module.__path__ = [os.path.join(root, *name.split("."))]
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)
    from mamba_ssm.ops.triton.ssd_combined import mamba_chunk_scan_combined
    return mamba_chunk_scan_combined
