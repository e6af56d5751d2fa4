"""Shared fixtures: where the real GPU recordings live, a guard that no hook outlives a test, and
the command line run in this process."""

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from .hooks_state import hooks_state

_DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def shared_data_dir() -> Path | None:
    """../shared/data (or $PYPROF_LIVE_TEST_DATA) when present, else None."""
    env = os.environ.get("PYPROF_LIVE_TEST_DATA")
    path = Path(env) if env else _DEFAULT_DATA
    return path if path.is_dir() else None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of real recordings; skips the test with a reason when it is absent."""
    path = shared_data_dir()
    if path is None:
        pytest.skip("real GPU recordings not found: set PYPROF_LIVE_TEST_DATA or place ../shared/data beside the repo")
    return path


@pytest.fixture(autouse=True)
def no_hooks_left():
    """Every test starts and ends with no pyprof_live hook installed (profiling always cleans up)."""
    before = hooks_state()
    yield
    assert hooks_state() == before


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(capsys, monkeypatch):
    """``cli(*args, cwd=None) -> CliRun``: ``pyprof-live args`` run in this process (usage errors and
    ``--help`` exit through SystemExit, as in a shell). tests/fresh_process.py runs the real program."""
    from pyprof_live.cli import main

    def run(*args, cwd=None) -> CliRun:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        capsys.readouterr()  # output of the test before this run
        try:
            code = main([str(a) for a in args])
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
        out = capsys.readouterr()
        return CliRun(code, out.out, out.err)

    return run
