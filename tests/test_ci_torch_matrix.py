""".ci/torch_matrix.py picks the torch a job tests from the index's version list, kept to the constraint files
pip is configured with: a machine that caps torch (CI's: torch<=2.14.1 while the index lists 2.15.0) must not
be asked for a release its pip refuses to install."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / ".ci"))
import torch_matrix

pytestmark = pytest.mark.torch_independent


def test_caps_come_from_the_constraint_files_pip_is_configured_with(tmp_path, monkeypatch):
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("# a machine's cap\ntorch<=2.14.1  # on disk\nTorchVision<=0.29.1\n-c more.txt\n\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # no pip.conf of this machine's: only what is set here
    monkeypatch.setenv("PIP_CONSTRAINT", str(constraints))
    assert [str(cap) for cap in torch_matrix.configured_caps("torch")] == ["torch<=2.14.1"]
    # names compare as pip compares them (case-blind); comments and option lines are no requirement
    assert [str(cap) for cap in torch_matrix.configured_caps("torchvision")] == ["TorchVision<=0.29.1"]
    monkeypatch.delenv("PIP_CONSTRAINT")
    assert torch_matrix.configured_caps("torch") == []


@pytest.fixture
def index(monkeypatch):
    """The index lists these torch releases (no network: `pip index versions` is answered here)."""
    listed = ["2.15.0", "2.14.1", "2.14.0", "2.13.0", "2.6.0", "2.5.1", "2.16.0rc1"]

    def run(cmd, **kwargs):
        assert cmd[1:5] == ["-m", "pip", "index", "versions"]
        return subprocess.CompletedProcess(cmd, 0, stdout=json.dumps({"versions": listed}))

    monkeypatch.setattr(torch_matrix, "run", run)


def test_the_newest_job_takes_the_newest_release_within_the_cap(index, monkeypatch):
    monkeypatch.setattr(torch_matrix, "configured_caps", lambda name: [Requirement("torch<=2.14.1")])
    assert torch_matrix.resolve("torch") == "2.14.1"  # 2.15.0 is listed, but pip would refuse it
    assert torch_matrix.resolve("torch==2.6.*") == "2.6.0"
    monkeypatch.setattr(torch_matrix, "configured_caps", lambda name: [])
    assert torch_matrix.resolve("torch") == "2.15.0"  # no cap: the newest final release (not 2.16.0rc1)


def test_a_cap_below_the_oldest_supported_release_fails_the_job_naming_both(index, monkeypatch):
    monkeypatch.setattr(torch_matrix, "configured_caps", lambda name: [Requirement("torch<2.6")])
    with pytest.raises(subprocess.CalledProcessError) as failed:
        torch_matrix.resolve("torch==2.6.*")
    assert "no version matches 'torch==2.6.*' within [<Requirement('torch<2.6')>]" in failed.value.stderr
