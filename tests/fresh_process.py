"""A new interpreter: for what only a new process shows (which modules are imported yet, real streams)."""

import subprocess
import sys


def run_in_a_fresh_process(code: str) -> str:
    """Its stdout; the test fails with its stderr when it exits non-zero."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def run_pyprof_live(*args, **kwargs) -> subprocess.CompletedProcess:
    """``python -m pyprof_live args`` as a program; stdout and stderr captured unless given."""
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    return subprocess.run(
        [sys.executable, "-m", "pyprof_live", *map(str, args)], text=True, timeout=300, **{**streams, **kwargs}
    )
