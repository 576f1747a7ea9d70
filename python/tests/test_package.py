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
