"""What the dashboard tests share: a log directory of runs and workers, a running server, and a
headless Chromium driven by Playwright (the system's chromium; skipped with a reason without one)."""

from __future__ import annotations

import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from .export_fixtures import hand_profile, live_profile

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def make_logdir(root: Path) -> dict:
    """exp1: worker0 (hand profile: 2 kernels, a bwd op) and worker1 (3 CPU steps); exp2: cpu (2 steps).
    Returns the profiles by (run, worker)."""
    profiles = {
        ("exp1", "worker0"): hand_profile(),
        ("exp1", "worker1"): live_profile(3),
        ("exp2", "cpu"): live_profile(2),
    }
    for (run, worker), profile in profiles.items():
        (root / run).mkdir(parents=True, exist_ok=True)
        profile.save(root / run / f"{worker}.pplive")
    return profiles


def browser_path() -> str | None:
    for name in (os.environ.get("PYPROF_LIVE_BROWSER"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


@contextmanager
def chromium_page(width: int = 1400, height: int = 900):
    """A Playwright page in the system's Chromium; skips the test when either is missing. Page errors
    and dialogs (an alert() would mean a profile's string ran as script) fail the test."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright for Python is not installed (pip install playwright)"
    )
    executable = browser_path()
    if executable is None:
        pytest.skip("no Chromium found (Debian: apt-get install chromium; .ci/run installs it)")
    problems = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
            yield page
        finally:
            browser.close()
    assert not problems, problems


def wait_ready(page, after: str | None = None) -> None:
    """Until the page says it has rendered (data-ready set, and changed from ``after`` when given).

    Selectors, not wait_for_function: the served page's Content-Security-Policy forbids the eval that
    Playwright's function polling needs (and the tests keep that policy on)."""
    selector = "html[data-ready]" if after is None else f'html[data-ready]:not([data-ready="{after}"])'
    page.wait_for_selector(selector, state="attached", timeout=60_000)


def wait_until(page, expression: str, timeout: float = 60.0) -> None:
    """Until ``expression`` is true in the page (evaluated from outside: allowed under the page's CSP)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"timed out waiting for {expression}"
        page.wait_for_timeout(100)


def ready_mark(page) -> str | None:
    return page.evaluate("document.documentElement.getAttribute('data-ready')")


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path
