#!/usr/bin/env python3
"""The torch-version jobs of CI: the tests that depend on torch, run on other torch releases.

    python3 .ci/torch_matrix.py oldest newest      # what .ci/run runs (through `make test-torch-matrix`)
    python3 .ci/torch_matrix.py 2.10.0             # any release, e.g. to check one in between

``oldest`` is the floor of the ``torch>=`` requirement in pyproject.toml; ``newest`` is what an unpinned
``pip install torch`` picks now, within the constraint files pip is configured with (resolved at each run, so a
new release is tested as soon as it is out).
Each job gets a venv of its own, kept between runs under ``${XDG_CACHE_HOME:-~/.cache}/pyprof_live-ci/``
and keyed by the exact torch version (CUDA builds are 5-6 GB; they run on CPU): a venv is built once per
torch release and reused; the three most recently used are kept, older ones deleted. The repository is not installed into
the venv (a cached venv must not point at one clone): the project's dependencies are, and the tests run
with the checkout on PYTHONPATH.

pip traps this guards against: installing the test extras beside a CUDA torch can make pip change torch
(torch 2.15 pins nvidia-cuda-cupti 13.2.86, which the newest cupti-python does not accept, and pip solved it by
installing torch 2.13.0 instead) or, torch being already there, upgrade what torch pinned (cuda-bindings,
nvidia-cuda-cupti) under it. So torch is installed alone first, ``pip freeze`` of that venv becomes the
constraints of every later install, and the job checks, in the venv, that ``torch.__version__`` is the one it
asked for. cupti-python is then whatever fits beside that torch (13.2.0 beside 2.15: it lacks the callback id
enums, which pyprof_live copes with and the GPU record tests skip on; 12.8 beside 2.10's CUDA 12 pins).

Each job ends with one line naming the torch it ran:
``torch-matrix oldest: torch 2.6.0+cu124, 1150 passed, 9 skipped in 301.2s (412 s with setup)``, followed
by pytest's ``FAILED``/``ERROR`` lines when there are any (so the end of CI's log names what failed).
The exit status is non-zero when any job failed.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
#: The tests each job runs: every test that exercises torch (capture, imports, formulas, views, exports, CLI:
#: nearly the whole suite), that is all but those marked ``torch_independent`` in pytest.ini; ``gpu`` tests skip.
PYTEST_ARGS = ["-m", "not torch_independent", "-q", "-p", "no:cacheprovider"]
#: A venv is complete once this file exists in it and holds :data:`RECIPE` (a build cut short leaves none, a
#: venv built the way an older version of this script did holds another: both are rebuilt); its
#: modification time is the venv's last use.
COMPLETE = ".pyprof_live-ci-complete"
#: Bump when :func:`build_venv` changes what it builds.
RECIPE = "torch alone, then frozen as constraints (1)"
#: ``pip freeze`` right after torch was installed: the constraints every later install keeps.
CONSTRAINTS = "torch-constraints.txt"
#: Venvs kept in the cache (5-6 GB each for a CUDA build): the two CI jobs' and one more.
KEEP = 3


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pyprof_live-ci"


def log(message: str) -> None:
    print(f"[torch-matrix] {message}", flush=True)


def run(cmd: list, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL, **kwargs)


def project_requirements() -> tuple[str, list[str]]:
    """(the torch requirement, the other requirements: dependencies and the test extra) of pyproject.toml."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + project["optional-dependencies"]["test"]
    torch = [r for r in requirements if re.match(r"torch\b", r)]
    return torch[0], [r for r in requirements if not re.match(r"torch\b", r)]


def oldest_spec(torch_requirement: str) -> str:
    """``torch>=2.6`` -> ``torch==2.6.*``: the newest patch release of the oldest supported minor."""
    floor = re.search(r">=\s*([0-9]+\.[0-9]+)", torch_requirement)
    if floor is None:
        sys.exit(f"torch-matrix: pyproject.toml's torch requirement {torch_requirement!r} names no floor (>=X.Y)")
    return f"torch=={floor.group(1)}.*"


def configured_caps(name: str) -> list[Requirement]:
    """The requirements on ``name`` in the constraint files pip is configured with (a pip.conf's ``constraint``,
    ``PIP_CONSTRAINT``): ``pip install`` keeps to them, ``pip index versions`` lists past them. A machine may cap
    torch at the releases it holds (CI's: /etc/xdg/pip/constraints.txt, ``torch<=2.14.1``, where 2.15.0 is on the
    index: resolved from the list alone, the newest job asked for a torch pip would not install, and failed)."""
    listed = run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    files = []
    for line in listed.splitlines():  # global.constraint='/etc/xdg/pip/constraints.txt', :env:.constraint='...'
        key, _, value = line.partition("=")
        if key.rpartition(".")[2] == "constraint":
            files += value.strip().strip("'\"").split()
    wanted = canonicalize_name(name)
    return [
        requirement
        for file in files
        for requirement in _requirements(file)
        if canonicalize_name(requirement.name) == wanted
    ]


def _requirements(file: str) -> list[Requirement]:
    """The requirement lines of a constraint file; comments, options (``-c``, ``--hash``) and lines packaging cannot
    read are left out, and a file that cannot be read gives none (pip itself then refuses to install, saying why)."""
    try:
        lines = Path(file).read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        text = line.split("#", 1)[0].strip()
        if text and not text.startswith("-"):
            try:
                found.append(Requirement(text))
            except ValueError:
                pass
    return found


def resolve(spec: str) -> str:
    """The newest torch release ``spec`` and pip's configured constraints allow, from the index's list of versions
    (``pip index versions``, which lists the versions with a wheel for this Python). No wheel is downloaded: a
    ``pip install --dry-run`` would download the whole CUDA wheel (~770 MB) to read its metadata where the index
    serves none apart, and a connection cut during that download failed CI."""
    requirement = Requirement(spec)
    listed = run(
        [sys.executable, "-m", "pip", "index", "versions", "--disable-pip-version-check", "--json", requirement.name],
        capture_output=True,
        text=True,
    )
    caps = configured_caps(requirement.name)
    allowed = [
        version
        for version in requirement.specifier.filter(Version(v) for v in json.loads(listed.stdout)["versions"])
        if all(cap.specifier.contains(version, prereleases=True) for cap in caps)
    ]
    if not allowed:
        raise subprocess.CalledProcessError(
            1, f"pip index versions {requirement.name}", stderr=f"no version matches {spec!r} within {caps}"
        )
    if caps:
        log(f"{spec}: pip's configured constraints allow {', '.join(map(str, caps))}")
    return str(max(allowed))


def complete(venv: Path) -> bool:
    return (venv / COMPLETE).is_file() and (venv / COMPLETE).read_text() == RECIPE


def build_venv(path: Path, version: str) -> None:
    """A venv holding torch==version, built beside ``path`` and moved into place once complete."""
    building = path.with_name(path.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    log(f"building {path} (torch {version}; a CUDA build is a multi-GB download)")
    run([sys.executable, "-m", "venv", str(building)])
    pip = [str(building / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    run(pip + ["--upgrade", "pip"])
    run(pip + [f"torch=={version}"])
    # Everything torch brought, pinned: the test extras must fit around it, never move it.
    frozen = run([str(building / "bin" / "python"), "-m", "pip", "freeze"], capture_output=True, text=True)
    (building / CONSTRAINTS).write_text(frozen.stdout)
    (building / COMPLETE).write_text(RECIPE)
    shutil.rmtree(path, ignore_errors=True)
    building.rename(path)


def install_requirements(venv: Path, requirements: list[str]) -> None:
    """The project's other requirements, constrained to what the torch install brought (a no-op once done)."""
    stamp = venv / ".pyprof_live-ci-requirements"
    key = hashlib.sha256("\n".join(requirements).encode()).hexdigest()
    if stamp.exists() and stamp.read_text() == key:
        return
    run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        + ["-c", str(venv / CONSTRAINTS)]
        + requirements
    )
    stamp.write_text(key)


def installed_torch(venv: Path) -> str:
    out = run(
        [str(venv / "bin" / "python"), "-c", "import torch; print(torch.__version__)"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    return out.stdout.strip().splitlines()[-1]


def run_tests(name: str, venv: Path) -> tuple[bool, str]:
    """Run the job's tests; (passed, pytest's summary line with the FAILED/ERROR lines of its short summary
    after it: CI keeps only the log's tail, and torch's shutdown warnings can push them out of it)."""
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("PYTHONHOME", None)
    proc = subprocess.Popen(
        [str(venv / "bin" / "python"), "-m", "pytest", *PYTEST_ARGS],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    summary = ""
    failures = []
    for line in proc.stdout:
        sys.stdout.write(f"  {name} | {line}")
        if re.search(r"\b(passed|failed|error|errors|no tests ran)\b.* in [0-9.]+s", line):
            summary = line.strip().strip("=").strip()
        elif line.startswith(("FAILED ", "ERROR ")):
            failures.append(f"\n    {line.rstrip()[:300]}")
    return proc.wait() == 0, (summary or f"pytest exited {proc.returncode}") + "".join(failures)


def job(name: str, spec: str, requirements: list[str], cache: Path) -> tuple[bool, str, Path | None]:
    started = time.monotonic()
    try:
        version = resolve(spec)
        venv = cache / f"torch-{version}"
        if not complete(venv):
            build_venv(venv, version)
        (venv / COMPLETE).touch()
        install_requirements(venv, requirements)
        got = installed_torch(venv)
    except subprocess.CalledProcessError as exc:
        return False, f"torch-matrix {name}: setting up {spec} failed ({exc})", None
    if got.split("+")[0] != version:
        return False, f"torch-matrix {name}: asked for torch {version}, the venv has {got}", venv
    log(f"{name}: torch {got} in {venv}")
    ok, summary = run_tests(name, venv)
    elapsed = time.monotonic() - started
    return ok, f"torch-matrix {name}: torch {got}, {summary} ({elapsed:.0f} s with setup)", venv


def prune(cache: Path, used: set) -> None:
    """Keep this run's venvs and the most recently used complete others, :data:`KEEP` in all (a release that
    is no longer the newest goes once two newer venvs were used); delete the rest, builds cut short included."""
    others = [v for v in cache.glob("torch-*") if v.name not in used]
    recent = sorted((v for v in others if complete(v)), key=lambda v: (v / COMPLETE).stat().st_mtime, reverse=True)
    kept = recent[: max(KEEP - len(used), 0)]
    for stale in others:
        if stale not in kept:
            log(f"removing {stale} (not used recently, or incomplete)")
            shutil.rmtree(stale, ignore_errors=True)


def main(argv: list[str]) -> int:
    if not argv:
        sys.exit(__doc__)
    torch_requirement, requirements = project_requirements()
    specs = {"oldest": oldest_spec(torch_requirement), "newest": "torch"}
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    # One CI run at a time builds or prunes the cached venvs.
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        results = [job(name, specs.get(name, f"torch=={name}"), requirements, cache) for name in argv]
        prune(cache, {venv.name for _, _, venv in results if venv is not None})
    for _, line, _ in results:
        print(line, flush=True)
    return 0 if all(ok for ok, _, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
