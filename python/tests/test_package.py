"""The package's metadata: its version and its typing marker."""

import pathlib
import re
import warnings

import pytest
from setuptools.config import pyprojecttoml

import ssd_mlir

PACKAGE_ROOT = pathlib.Path(__file__).resolve().parent.parent
PYPROJECT = PACKAGE_ROOT / "pyproject.toml"


@pytest.fixture(scope="module")
def configuration():
    """pyproject.toml as setuptools resolves it when it installs the package."""
    with warnings.catch_warnings():
        # setuptools calls its [tool.setuptools] support beta; not our concern.
        warnings.simplefilter("ignore")
        return pyprojecttoml.read_configuration(PYPROJECT, expand=True)


def test_version_is_the_one_pyproject_installs(configuration):
    assert configuration["project"]["version"] == ssd_mlir.__version__


def test_version_is_a_release_number():
    # PEP 440 release segment, optionally with a pre-release or dev suffix.
    assert re.fullmatch(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.dev\d+)?", ssd_mlir.__version__)


def test_typing_marker_ships_with_the_package(configuration):
    marker = pathlib.Path(ssd_mlir.__file__).parent / "py.typed"
    assert marker.is_file()
    assert "py.typed" in configuration["tool"]["setuptools"]["package-data"]["ssd_mlir"]


def test_build_backend_bundles_what_the_loader_looks_for():
    """The platform wheel's backend puts the libraries where _library looks."""
    import importlib.util

    from ssd_mlir import _library

    path = PACKAGE_ROOT / "_backend" / "ssd_mlir_backend.py"
    spec = importlib.util.spec_from_file_location("ssd_mlir_backend", path)
    backend = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(backend)
    assert backend.BUNDLED == f"ssd_mlir/{_library.BUNDLED_DIR.name}"
    assert set(backend.ROOTS) == {_library.CAPI.file_name, _library.RUNTIME.file_name}
