"""p.save_html() / --html: the dashboard's pages as one self-contained file. The embedded data holds the
views' numbers, nothing from a profile can end the data's <script> element, nothing is fetched from the
network; opened in a real headless Chromium (Playwright, the system's chromium; skipped with a reason
without them), its charts show the hand-worked numbers, with screenshots under artifacts/.
"""

from __future__ import annotations

import json
import re

import pytest

from pyprof_live.profile import Profile
from pyprof_live.records import ApiRecord, KernelRecord, OpRecord, RangeRecord
from pyprof_live.render.html_app import one_file_page

from .dashboard_fixtures import chromium_page, ready_mark, screenshot, wait_ready
from .export_fixtures import hand_profile, live_profile

_DATA = re.compile(r'<script type="application/json" id="pyprof-data">(.*?)</script>', re.S)


def embedded(html: str) -> dict:
    (data,) = _DATA.findall(html)
    return json.loads(data)


def hostile_profile() -> Profile:
    """Names that would be markup (or would end a <script>) if they were not kept as text."""
    ops = [OpRecord('<img src=x onerror="alert(1)">', 0, 1000, tid=1, module='Net.<script>alert("m")</script>')]
    apis = [ApiRecord("cudaLaunchKernel", 100, 150, correlation=1, tid=1)]
    kernels = [KernelRecord("</script><script>alert(4)</script>", 200, 700, correlation=1)]
    ranges = [RangeRecord("</section><h1>x\u2028", 0, 1000, tid=1, kind="step")]
    return Profile(
        ops=ops,
        apis=apis,
        kernels=kernels,
        ranges=ranges,
        meta={"source": "<b>src</b>", "path": '"><script>alert(2)</script>'},
    )


def test_hand_profile_data_holds_the_views_numbers():
    data = embedded(one_file_page([("run", "w", hand_profile())]))
    (worker,) = data["workers"]
    views = worker["views"]["views"]
    # Step 0 runs 500..13000 = 12500 ns. Kernels 2500..3500 and 11000..11800: kernel 1800 (the memcpy
    # 3200..3300 lies under the first kernel); runtime: launches 2000..2100 and 10500..10600 = 200;
    # cpu_exec: ops 1000..5000 and 10000..12000 = 6000 minus the 1800 + 200 above = 4000; other 6500.
    overview = views["overview"]
    columns = [c["name"] for c in overview["columns"]]
    step = dict(zip(columns, overview["rows"][0]))
    assert (step["dur"], step["kernel"], step["runtime"], step["cpu_exec"], step["other"]) == (
        12500,
        1800,
        200,
        4000,
        6500,
    )
    assert overview["text"][0][columns.index("dur")] == "12.5 µs"
    ops = views["ops"]
    # by total device time: addmm 1100 = linear 1100 (through addmm; addmm has more host self) > mm 800
    assert [r[0] for r in ops["rows"]] == ["aten::addmm", "aten::linear", "aten::mm"]
    assert views["kernels"]["rows"][0][:3] == ["gemm_kernel", 1, 1000]
    assert worker["views"]["summary"]["cards"][3] == ["kernels tied to an op", "2 / 2"]
    assert data["units"]["time"]["ladder"][0] == [1e9, "s"]


def test_everything_from_the_profile_stays_inside_the_data():
    html = one_file_page([("<run>", "<w>", hostile_profile())])
    # only our two scripts: the data and the code; nothing in the data ends its element
    assert html.count("<script") == 2 and html.count("</script>") == 2
    data = embedded(html)
    text = json.dumps(data, ensure_ascii=False)
    for hostile in (
        '<img src=x onerror=\\"alert(1)\\">',
        "<b>src</b>",
        "</section><h1>x\u2028",
        "</script><script>alert(4)</script>",
    ):
        assert hostile in text, hostile
    assert "\u2028" not in _DATA.findall(html)[0]  # a line separator would end a JS string in old parsers


def test_page_needs_no_network():
    html = one_file_page([("run", "w", hand_profile())])
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html
    # the only URL: SVG's namespace name in the script (createElementNS), which browsers never fetch
    assert re.findall(r"https?://[^\s'\"]+", html) == ["http://www.w3.org/2000/svg"]


def test_save_html_writes_utf8_atomically(tmp_path):
    path = tmp_path / "report.html"
    hand_profile().save_html(path)
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


@pytest.mark.e2e
@pytest.mark.parametrize("which", ["hand", "live"])
def test_one_file_page_in_headless_chromium(tmp_path, which):
    profile = hand_profile() if which == "hand" else live_profile(steps=3)
    path = tmp_path / "report.html"
    profile.save_html(path)
    with chromium_page() as page:
        page.goto(path.as_uri())
        wait_ready(page)
        steps = page.eval_on_selector_all(
            '.chart[data-chart="steps"] rect', "rs => rs.map(r => [r.dataset.part, Number(r.dataset.value)])"
        )
        overview = {r["step"]: r for r in profile.overview().rows}
        if which == "hand":
            assert steps == [["kernel", 1800], ["runtime", 200], ["cpu_exec", 4000], ["other", 6500]]
        else:
            parts = [
                c
                for c in ("cpu_exec", "other", "dataloader")
                if any(overview[s][c] for s in ("step 0", "step 1", "step 2"))
            ]
            expected = [[c, overview[s][c]] for s in ("step 0", "step 1", "step 2") for c in parts if overview[s][c]]
            assert sorted(steps) == sorted(expected)
        screenshot(page, f"html_report_{which}")
        mark = ready_mark(page)
        page.click('#tabs a[data-view="operator"]')
        wait_ready(page, after=mark)
        assert len(page.query_selector_all('table[data-table="ops"] tbody tr')) == min(len(profile.ops().rows), 300)
        mark = ready_mark(page)
        page.click('#tabs a[data-view="trace"]')
        wait_ready(page, after=mark)
        records = profile.records
        assert page.evaluate("window.pyprofTrace.h.slices") == len(records.ops) + len(records.ranges) + len(
            records.kernels
        ) + len(records.memops)
        screenshot(page, f"html_report_{which}_trace")
        assert "Diff" not in page.inner_text("#tabs")  # one profile: nothing to compare it with
