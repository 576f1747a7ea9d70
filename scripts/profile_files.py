"""Finding the files that `ssd-bench --profile DIR --json FILE` names."""
import os
import sys


def locate(path, bench_json):
    """The file at `path`, or (results copied off the GPU machine) the file
    of that name beside the bench JSON or in a folder beside it."""
    if os.path.exists(path):
        return path
    here = os.path.dirname(os.path.abspath(bench_json))
    name = os.path.basename(path)
    for root, _, files in os.walk(here):
        if name in files:
            return os.path.join(root, name)
    sys.exit(f"error: {path} not found, nor {name} under {here}")
