"""Live: a short CPU training script runs under profile(logdir=...) beside the server, and the open page
gains its steps by itself (server-sent events), without a reload."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
import time

import pytest

import pyprof_live

from .dashboard_fixtures import chromium_page, screenshot, wait_ready

pytestmark = pytest.mark.e2e

TRAINING = textwrap.dedent(
    """
    import sys, time, torch
    import pyprof_live

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pyprof_live.profile(logdir=sys.argv[1], flush_every=0) as p:
        for step in range(int(sys.argv[2])):
            loss = model(torch.randn(4, 8)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            p.step()
            print("step", step, flush=True)
            sys.stdin.readline()  # the test says when to go on
    """
)


def steps_on_page(page) -> int:
    return page.evaluate(
        "() => { const c = Array.from(document.querySelectorAll('.card')).find(c => c.dataset.card === 'steps');"
        " return c ? Number(c.querySelector('.v').textContent) : 0; }"
    )


def test_open_page_gains_a_step_while_the_job_runs(tmp_path):
    if "logdir" not in inspect.signature(pyprof_live.profile).parameters:
        pytest.skip("profile(logdir=...) is not in this build yet (runs-and-ranks work)")
    run = tmp_path / "logs" / "exp"
    run.mkdir(parents=True)
    script = tmp_path / "train.py"
    script.write_text(TRAINING)
    job = subprocess.Popen(
        [sys.executable, str(script), str(run), "4"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    server = pyprof_live.serve(tmp_path / "logs", port=0, poll=0.2)
    try:
        assert job.stdout.readline().strip() == "step 0"
        with chromium_page() as page:
            page.goto(server.url)
            page.wait_for_selector(".card", timeout=60_000)
            wait_ready(page)
            page.evaluate("window.__same_page = true")  # gone if the page reloads
            first = steps_on_page(page)
            assert first >= 1
            job.stdin.write("\n")
            job.stdin.flush()
            assert job.stdout.readline().strip() == "step 1"
            deadline = time.monotonic() + 60
            while steps_on_page(page) <= first and time.monotonic() < deadline:
                page.wait_for_timeout(200)
            assert steps_on_page(page) > first, "the page did not gain a step"
            assert page.evaluate("window.__same_page === true")  # updated in place, no reload
            assert "live" in page.inner_text("#live")
            screenshot(page, "dashboard_live")
        for _ in range(2):
            job.stdin.write("\n")
            job.stdin.flush()
        job.stdin.close()
        assert job.wait(timeout=120) == 0, job.stderr.read()
    finally:
        server.stop()
        if job.poll() is None:
            job.kill()
