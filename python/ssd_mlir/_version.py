"""The package's version, the one place it is written.

pyproject.toml reads it from here (setuptools' dynamic version), so the
installed metadata and ssd_mlir.__version__ cannot disagree.
"""

__version__ = "0.1.0"
