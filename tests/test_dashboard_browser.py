"""The dashboard in a real headless Chromium (Playwright, the system's chromium; skipped with a reason
without them): pick a run and a worker, visit every view, zoom the trace, click a kernel and read its
op; hostile names stay text. Screenshots go to artifacts/ (git-ignored)."""

from __future__ import annotations

import pytest

import pyprof_live
from pyprof_live.render.page_units import human

from .dashboard_fixtures import chromium_page, make_logdir, ready_mark, screenshot, wait_ready, wait_until
from .test_export_html import hostile_profile

pytestmark = pytest.mark.e2e


@pytest.fixture
def served(tmp_path):
    profiles = make_logdir(tmp_path)
    server = pyprof_live.serve(tmp_path, port=0, poll=0.2)
    try:
        yield server, profiles
    finally:
        server.stop()


def click_and_wait(page, selector: str) -> None:
    mark = ready_mark(page)
    page.click(selector)
    wait_ready(page, after=mark)


def select_and_wait(page, selector: str, value: str) -> None:
    mark = ready_mark(page)
    page.select_option(selector, value)
    wait_ready(page, after=mark)


def table_texts(page, name: str) -> list:
    return page.eval_on_selector_all(
        f'table[data-table="{name}"] tbody tr', "rows => rows.map(r => Array.from(r.cells, c => c.textContent))"
    )


def test_pick_run_and_worker_and_visit_every_view(served):
    server, profiles = served
    p = profiles[("exp1", "worker1")]
    with chromium_page() as page:
        page.goto(server.url)
        wait_ready(page)
        assert page.eval_on_selector_all("#run option", "o => o.map(x => x.value)") == ["exp1", "exp2"]
        select_and_wait(page, "#worker", "worker1")
        assert page.eval_on_selector("#worker", "s => s.value") == "worker1"
        tabs = page.eval_on_selector_all("#tabs a", "a => a.map(x => x.dataset.view)")
        assert tabs == ["overview", "operator", "kernel", "module", "trace", "memory", "distributed", "diff"]

        # Overview: 3 steps of the live profile, each with its duration in human units.
        cards = dict(
            page.eval_on_selector_all(".card", "cs => cs.map(c => [c.dataset.card, c.querySelector('.v').textContent])")
        )
        assert cards["steps"] == "3" and cards["ops"] == f"{len(p.records.ops):,}"
        steps = table_texts(page, "steps")
        overview = p.overview().rows
        assert [r[0] for r in steps] == [r["step"] for r in overview]
        assert [r[1] for r in steps] == [human(r["dur"], "time") for r in overview]
        screenshot(page, "dashboard_overview")

        click_and_wait(page, '#tabs a[data-view="operator"]')
        rows = table_texts(page, "ops")
        assert [r[0] for r in rows] == [r["op"] for r in p.ops().rows][:300]
        assert page.query_selector('.chart[data-chart="host_self"] rect') is not None
        page.select_option('select[aria-label="group by"]', "ops+shape")  # redraws at once, no fetch
        assert len(table_texts(page, "ops+shape")) == min(len(p.ops(by="op+shape").rows), 300)
        screenshot(page, "dashboard_operator")

        click_and_wait(page, '#tabs a[data-view="kernel"]')
        assert "No GPU kernels" in page.inner_text("main")  # a CPU run

        click_and_wait(page, '#tabs a[data-view="module"]')
        modules = page.eval_on_selector_all(".tree-node", "ns => ns.map(n => n.dataset.module)")
        assert modules == [r["module"] for r in p.modules().rows]
        screenshot(page, "dashboard_module")

        click_and_wait(page, '#tabs a[data-view="trace"]')
        assert page.evaluate("window.pyprofTrace.h.slices") == len(p.records.ops) + len(p.records.ranges)

        click_and_wait(page, '#tabs a[data-view="memory"]')
        assert page.query_selector('[data-page="memory"] h2') is not None
        screenshot(page, "dashboard_memory")

        click_and_wait(page, '#tabs a[data-view="distributed"]')
        workers = table_texts(page, "workers")
        assert sorted(r[0] for r in workers) == ["worker0", "worker1"]
        screenshot(page, "dashboard_distributed")

        click_and_wait(page, '#tabs a[data-view="diff"]')
        diff = table_texts(page, "diff")
        assert {r[0] for r in diff} >= {"aten::addmm", "aten::mm"}
        screenshot(page, "dashboard_diff")

        # Another run: its one worker is picked, the view stays.
        select_and_wait(page, "#run", "exp2")
        assert page.eval_on_selector("#worker", "s => s.value") == "cpu"


def test_zoom_the_trace_and_click_a_kernel(served):
    server, _ = served
    with chromium_page() as page:
        page.goto(server.url + "#view=trace&run=exp1&worker=worker0")
        wait_ready(page)
        span = page.evaluate("window.pyprofTrace.t1 - window.pyprofTrace.t0")
        assert span == 12500  # the hand profile: ranges 500..13000 ns, origin 500
        box = page.query_selector("canvas[data-trace]").bounding_box()
        page.mouse.move(box["x"] + 400, box["y"] + 60)
        page.mouse.wheel(0, -400)  # zoom in at the pointer
        wait_until(page, f"window.pyprofTrace.t1 - window.pyprofTrace.t0 < {span}")
        zoomed = page.evaluate("[window.pyprofTrace.t0, window.pyprofTrace.t1]")
        assert zoomed[1] - zoomed[0] < span * 0.7
        kernel = page.evaluate("window.pyprofTrace.findVisible('kernel')")
        assert kernel is not None and kernel["name"] == "gemm_kernel"
        page.mouse.click(kernel["x"], kernel["y"])
        page.wait_for_selector('[data-details] dd[data-field="op"]')
        fields = dict(
            page.eval_on_selector_all(
                "[data-details] dd[data-field]", "ds => ds.map(d => [d.dataset.field, d.textContent])"
            )
        )
        assert fields["op"] == "aten::addmm"
        assert fields["kernel"] == "void gemm_kernel<float>(float*)"
        assert fields["duration"] == "1 µs"  # 2500..3500 ns
        assert fields["op input shapes"] == "[4]fp32 [8,16]fp32 [16,4]fp32 beta=1 alpha=1"
        screenshot(page, "dashboard_trace_kernel")
        # the link to the launching op selects it; its details list the kernel it launched
        page.click('[data-details] a:text("aten::addmm")')
        page.wait_for_selector('[data-details] dd[data-field="module"]')
        assert page.inner_text('[data-details] dd[data-field="kind"]') == "op"


def test_memory_view_of_a_real_trace_shows_the_peak_and_what_was_live_at_it(tmp_path, shared_data):
    # The Qwen1.5 trace with profile_memory=True: tests/test_memory.py checks its cuda:0 peak
    # (2,088,508,416 bytes) and live blocks by op against an independent reading of the JSON.
    trace = shared_data / "kineto" / "tracelens_qwen1.5-0.5b_h100_infer.json.gz"
    (tmp_path / "qwen").mkdir()
    (tmp_path / "qwen" / "rank0.json.gz").write_bytes(trace.read_bytes())  # a copy: symlinks out are refused
    cuda = [r for r in pyprof_live.load(trace).memory().rows if r["device"] == "cuda:0"]
    server = pyprof_live.serve(tmp_path, port=0)
    try:
        with chromium_page() as page:
            page.goto(server.url + "#view=memory&run=qwen&worker=rank0")
            wait_ready(page)
            chart = '.chart[data-chart="memory-cuda:0"]'
            assert page.eval_on_selector(f"{chart} circle", "c => c.dataset.peak") == "2088508416"
            assert page.inner_text(f"{chart} h3").startswith("cuda:0: peak 2.09 GB at ")  # 2,088,508,416 B
            assert page.eval_on_selector(f"{chart} polyline", "l => l.points.length") > 2  # a curve over time
            shown = [r for r in table_texts(page, "memory") if r[0] == "cuda:0"]
            # (allocated before the profile) 985 MB, then aten::add 476 MB, aten::addmm 440 MB, ...
            assert [r[1] for r in shown] == [r["op"] for r in cuda]
            assert [r[2] for r in shown] == [human(r["live_bytes"], "bytes") for r in cuda]
            assert shown[:3] == [
                ["cuda:0", "(allocated before the profile)", "985 MB", "-", "-"],  # no blocks: never seen allocated
                ["cuda:0", "aten::add", "476 MB", "26", "1.76 GB"],
                ["cuda:0", "aten::addmm", "440 MB", "24", "1.32 GB"],
            ]
            screenshot(page, "dashboard_memory_kineto")
    finally:
        server.stop()


def test_human_units_in_the_page_are_the_text_reports(served):
    server, _ = served
    values = [
        (0, "time"),
        (950, "time"),
        (12_345, "time"),
        (263e6, "time"),
        (1.21e9, "time"),
        (-2500, "time"),
        (1536, "bytes"),
        (4.2e9, "bytes"),
        (12.3e12, "rate"),
        (7e9, "flops"),
    ]
    with chromium_page() as page:
        page.goto(server.url)
        wait_ready(page)
        shown = page.evaluate("vs => vs.map(v => window.pyprofHuman(v[0], v[1]))", [list(v) for v in values])
    assert shown == [human(v, q) for v, q in values]


def test_names_from_a_profile_stay_text(tmp_path):
    (tmp_path / "bad<run>").mkdir()
    hostile_profile().save(tmp_path / "bad<run>" / "w<img src=x onerror=alert(3)>.pplive")
    server = pyprof_live.serve(tmp_path, port=0)
    try:
        with chromium_page() as page:  # an alert() would fail the test (see chromium_page)
            page.goto(server.url)
            wait_ready(page)
            for view in ("overview", "operator", "kernel", "module", "trace"):
                click_and_wait(page, f'#tabs a[data-view="{view}"]')
                assert page.evaluate("document.querySelectorAll('main img, main b, main script, main h1').length") == 0
            page.evaluate("window.pyprofTrace.select(window.pyprofTrace.findVisible('op').slice)")
            assert page.inner_text('[data-details] dd[data-field="name"]') == '<img src=x onerror="alert(1)">'
            click_and_wait(page, '#tabs a[data-view="operator"]')
            assert '<img src=x onerror="alert(1)">' in page.inner_text('table[data-table="ops"]')
            assert page.eval_on_selector("#worker", "s => s.value") == "w<img src=x onerror=alert(3)>"
    finally:
        server.stop()
