"""Where the native libraries are looked for (ssd_mlir._library)."""

import pytest

from ssd_mlir import _library


@pytest.fixture
def bundled(tmp_path, monkeypatch):
    folder = tmp_path / "bundled"
    folder.mkdir()
    monkeypatch.setattr(_library, "BUNDLED_DIR", folder)
    monkeypatch.delenv("SSD_MLIR_LIB", raising=False)
    monkeypatch.delenv("SSD_MLIR_RUNTIME_LIB", raising=False)
    return folder


def origins(library):
    return [origin for _, origin in _library.candidates(library)]


def test_the_variable_is_the_only_place_when_set(bundled, tmp_path, monkeypatch):
    monkeypatch.setenv("SSD_MLIR_LIB", str(tmp_path))
    assert _library.candidates(_library.CAPI) == [
        (tmp_path / "libSSDCAPI.so", "$SSD_MLIR_LIB")]
    monkeypatch.setenv("SSD_MLIR_RUNTIME_LIB", str(tmp_path / "rt.so"))
    assert _library.candidates(_library.RUNTIME) == [
        (tmp_path / "rt.so", "$SSD_MLIR_RUNTIME_LIB")]


def test_bundled_comes_before_the_checkout(bundled):
    paths = _library.candidates(_library.CAPI)
    assert paths[0] == (bundled / "libSSDCAPI.so", "bundled with the package")
    # From a checkout (these tests), its build/lib comes last.
    assert origins(_library.CAPI)[1:] == ["the repository's build/lib"]


def test_runtime_beside_the_c_api_comes_before_bundled(bundled, tmp_path, monkeypatch):
    monkeypatch.setenv("SSD_MLIR_LIB", str(tmp_path / "libSSDCAPI.so"))
    paths = _library.candidates(_library.RUNTIME)
    assert paths[0] == (tmp_path / "libSSDRuntime.so", "beside $SSD_MLIR_LIB")
    assert paths[1] == (bundled / "libSSDRuntime.so", "bundled with the package")


def test_error_names_every_place(bundled, tmp_path, monkeypatch):
    # Not from a checkout: its build/lib may hold the library.
    monkeypatch.setattr(_library, "_REPOSITORY", tmp_path)
    with pytest.raises(_library.LibraryNotFoundError) as raised:
        _library.load(_library.RUNTIME)
    message = str(raised.value)
    assert message.startswith("cannot load libSSDRuntime.so, the SSD-MLIR runtime.")
    assert "$SSD_MLIR_RUNTIME_LIB: not set" in message
    assert f"{bundled / 'libSSDRuntime.so'} (bundled with the package): no such file" in message


def test_missing_function_is_named(bundled):
    import ctypes

    libc = ctypes.CDLL(None)
    with pytest.raises(_library.LibraryNotFoundError, match="lacks ssdNoSuchFunction"):
        _library.declare(libc, {"ssdNoSuchFunction": (None, [])}, "ssd-c/Layer.h")


def test_once_keeps_the_first_success_and_retries_failures():
    calls = []

    @_library.once
    def make():
        calls.append(1)
        if len(calls) == 1:
            raise OSError("first")
        return object()

    with pytest.raises(OSError):
        make()
    first = make()
    assert make() is first and len(calls) == 2
