"""Running pass pipelines on a module."""

from __future__ import annotations

from . import _capi
from .errors import MLIRError, PipelineError
from .ir import Module


def _anchored(pipeline: str) -> str:
    """The pipeline nested under builtin.module unless it already is."""
    text = pipeline.strip()
    if text.startswith("builtin.module("):
        return text
    return f"builtin.module({text})"


def run_pipeline(module: Module, pipeline: str) -> Module:
    """Runs `pipeline` on `module` in place and returns the module.

    `pipeline` is a textual pass pipeline, anchored on builtin.module
    ("builtin.module(ssd-decompose)") or not ("ssd-decompose",
    "ssd-decompose{chunk-size=32},canonicalize", "func.func(cse)"). Raises
    PipelineError when it names an unknown pass or a bad option, and
    MLIRError with the diagnostics when a pass fails.
    """
    if not isinstance(module, Module):
        raise TypeError(
            f"run_pipeline() expects an ssd_mlir.Module, got {type(module).__name__}"
        )
    if not isinstance(pipeline, str):
        raise TypeError(f"the pipeline must be a str, got {type(pipeline).__name__}")
    context = module.context
    lib = context._lib
    text = _anchored(pipeline)
    data = text.encode("utf-8")

    pm = lib.mlirPassManagerCreate(context._handle)
    try:
        parse_errors = _capi.StringCollector()
        parsed = lib.mlirParsePassPipeline(
            lib.mlirPassManagerGetAsOpPassManager(pm),
            _capi.MlirStringRef.of(data),
            parse_errors.callback,
            None,
        )
        if not parsed.succeeded():
            raise PipelineError(
                f"invalid pass pipeline '{pipeline}'", [parse_errors.text().rstrip()]
            )
        with context._capture_errors() as errors:
            ran = lib.mlirPassManagerRunOnOp(pm, module._operation)
        if not ran.succeeded():
            raise MLIRError(f"pass pipeline '{text}' failed", errors)
    finally:
        lib.mlirPassManagerDestroy(pm)
    return module
