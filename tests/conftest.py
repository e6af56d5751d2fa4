"""Shared fixtures: where the real GPU recordings live, and a guard that no hook outlives a test."""

import os
from pathlib import Path

import pytest

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


def pytest_terminal_summary(terminalreporter):
    """Every run names the torch it tested (CI runs the suite on several: .ci/torch_matrix.py)."""
    import torch

    terminalreporter.write_line(f"tested with torch {torch.__version__}")
