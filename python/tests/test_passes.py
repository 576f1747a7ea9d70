"""Pass pipelines through the C API's pass manager."""

import re

import pytest

import ssd_mlir

# `%a, %b = ssd.op kw(%v : type) kw(%w : type) ... -> types`
_STEP = re.compile(r"^\s*(?P<results>%[^=]+) = ssd\.(?P<op>\w+) (?P<rest>.*)$")
_OPERAND = re.compile(r"(\w+)\((%\w+) :")


def _steps(text):
    """{op name: (result names, {operand keyword: value name})}."""
    steps = {}
    for line in text.splitlines():
        match = _STEP.match(line)
        if match:
            results = [r.strip() for r in match["results"].split(",")]
            operands = dict(_OPERAND.findall(match["rest"]))
            assert match["op"] not in steps, f"two ssd.{match['op']} ops"
            steps[match["op"]] = (results, operands)
    return steps


def test_decompose_produces_the_six_steps(combined_text):
    module = ssd_mlir.parse(combined_text)
    assert ssd_mlir.run_pipeline(module, "builtin.module(ssd-decompose)") is module
    module.verify()
    steps = _steps(str(module))
    assert sorted(steps) == sorted(
        ["chunk_cumsum", "chunk_state", "state_passing", "bmm", "segsum", "chunk_scan"]
    )
    assert "ssd.combined" not in str(module)

    (dt_out, da), cumsum = steps["chunk_cumsum"]
    assert cumsum == {"dt": "%arg1", "A": "%arg2", "dt_bias": "%arg7"}
    (states,), chunk_state = steps["chunk_state"]
    assert chunk_state == {"x": "%arg0", "B": "%arg3", "dt": dt_out, "dA_cumsum": da}
    (out, final), passing = steps["state_passing"]
    assert passing == {"states": states, "dA_cumsum": da, "initial_states": "%arg8"}
    (cb,), bmm = steps["bmm"]
    assert bmm == {"C": "%arg4", "B": "%arg3"}
    (segsum,), segsum_operands = steps["segsum"]
    assert segsum_operands == {"dA_cumsum": da}
    (y,), scan = steps["chunk_scan"]
    assert scan == {
        "x": "%arg0", "dt": dt_out, "dA_cumsum": da, "segsum": segsum,
        "C": "%arg4", "CB": cb, "states": out, "D": "%arg5", "z": "%arg6",
    }
    assert f"return {y}, {final} :" in str(module)


def test_pass_name_with_options(combined_text):
    module = ssd_mlir.parse(combined_text)
    ssd_mlir.run_pipeline(module, "ssd-decompose{chunk-size=32}")
    assert "-> tensor<1x2x2x32xf32>, tensor<1x2x2x32xf32>" in str(module)


def test_upstream_passes_are_registered(combined_text):
    module = ssd_mlir.parse(combined_text)
    ssd_mlir.run_pipeline(module, "ssd-decompose,canonicalize,func.func(cse)")
    assert "ssd.chunk_scan" in str(module)


def test_unknown_pass_is_a_pipeline_error(combined_text):
    module = ssd_mlir.parse(combined_text)
    before = str(module)
    with pytest.raises(ssd_mlir.PipelineError) as raised:
        ssd_mlir.run_pipeline(module, "ssd-no-such-pass")
    message = str(raised.value)
    assert message.startswith("invalid pass pipeline 'ssd-no-such-pass':")
    assert "'ssd-no-such-pass' does not refer to a registered pass" in message
    assert str(module) == before


def test_unknown_option_is_a_pipeline_error(combined_text):
    module = ssd_mlir.parse(combined_text)
    with pytest.raises(ssd_mlir.PipelineError, match="no such option nope"):
        ssd_mlir.run_pipeline(module, "ssd-decompose{nope=1}")


def test_failing_pass_reports_its_diagnostic(combined_text):
    module = ssd_mlir.parse(combined_text)
    with pytest.raises(ssd_mlir.MLIRError) as raised:
        ssd_mlir.run_pipeline(module, "ssd-decompose{chunk-size=3}")
    assert not isinstance(raised.value, ssd_mlir.PipelineError)
    assert "chunk-size must be a positive power of two or 0, got 3" in str(raised.value)


def test_pipeline_argument_types(combined_text):
    module = ssd_mlir.parse(combined_text)
    with pytest.raises(TypeError, match="ssd_mlir.Module"):
        ssd_mlir.run_pipeline(str(module), "ssd-decompose")
    with pytest.raises(TypeError, match="must be a str"):
        ssd_mlir.run_pipeline(module, ["ssd-decompose"])
