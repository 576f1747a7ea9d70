"""Parsing, verifying and printing."""

import pytest

import ssd_mlir
from ssd_mlir import _library
from conftest import WRONG_HEADS_ERROR


def test_round_trip(combined_text):
    module = ssd_mlir.parse(combined_text)
    module.verify()
    printed = str(module)
    assert "ssd.combined x(%arg0 : tensor<1x64x2x4xf32>)" in printed
    for operand in ["D(%arg5", "z(%arg6", "dt_bias(%arg7", "initial_states(%arg8"]:
        assert operand in printed
    assert "dt_softplus" in printed
    assert str(ssd_mlir.parse(printed)) == printed


def test_modules_share_a_context(combined_text):
    context = ssd_mlir.Context()
    first = ssd_mlir.parse(combined_text, context=context)
    second = ssd_mlir.parse(str(first), context=context)
    assert first.context is second.context is context
    assert str(first) == str(second)


def test_parse_error_names_the_problem():
    with pytest.raises(ssd_mlir.MLIRError) as raised:
        ssd_mlir.parse("%y = ssd.nope() : () -> f32")
    assert raised.value.diagnostics == ["-:1:6: error: custom op 'ssd.nope' is unknown"]
    assert str(raised.value).startswith("cannot parse module:\n")


def test_parse_verifies_by_default(wrong_heads_text):
    with pytest.raises(ssd_mlir.MLIRError) as raised:
        ssd_mlir.parse(wrong_heads_text)
    message = str(raised.value)
    assert message.startswith("module verification failed:\n")
    assert WRONG_HEADS_ERROR in message


def test_verify_reports_the_operand(wrong_heads_text):
    module = ssd_mlir.parse(wrong_heads_text, verify=False)
    with pytest.raises(ssd_mlir.MLIRError) as raised:
        module.verify()
    (diagnostic,) = raised.value.diagnostics
    first_line, note = diagnostic.split("\n", 1)
    assert first_line == WRONG_HEADS_ERROR
    assert note.startswith("  -:5:13: note: see current operation")
    # Invalid IR still prints (in generic form), and verification repeats.
    assert '"ssd.combined"' in str(module)
    with pytest.raises(ssd_mlir.MLIRError):
        module.verify()


def test_wrong_argument_types():
    with pytest.raises(TypeError, match="expects the IR as str"):
        ssd_mlir.parse(b"module {}")
    with pytest.raises(TypeError, match="ssd_mlir.Context"):
        ssd_mlir.parse("module {}", context="ctx")


def test_missing_library_is_a_clear_error(tmp_path, monkeypatch):
    missing = tmp_path / "nowhere"
    monkeypatch.setenv("SSD_MLIR_LIB", str(missing))
    with pytest.raises(ssd_mlir.LibraryNotFoundError) as raised:
        _library.load()
    message = str(raised.value)
    assert message.startswith("cannot load libSSDCAPI.so")
    assert f"{missing} ($SSD_MLIR_LIB): no such file" in message
    assert "set SSD_MLIR_LIB" in message


def test_unloadable_library_is_a_clear_error(tmp_path, monkeypatch):
    fake = tmp_path / "libSSDCAPI.so"
    fake.write_text("not a shared library")
    monkeypatch.setenv("SSD_MLIR_LIB", str(tmp_path))
    with pytest.raises(ssd_mlir.LibraryNotFoundError, match=f"{fake} .*: .*"):
        _library.load()
