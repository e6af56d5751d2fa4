"""HTML report: sections, charts and tables hold the views' numbers, everything is escaped, nothing is
fetched from the network; and the report opened in a real headless Chromium (skipped when none is
installed; .ci/run installs Debian's chromium), with a screenshot kept under artifacts/.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pyprof_live.profile import Profile
from pyprof_live.records import ApiRecord, KernelRecord, OpRecord, RangeRecord
from pyprof_live.render.html_report import report_html

from .export_fixtures import hand_profile, live_profile

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
_VOID = {"meta", "link", "br", "hr", "img", "input", "source", "wbr", "area", "base", "col", "embed", "param", "track"}


class Node:
    def __init__(self, tag: str, attrs: dict, parent=None):
        self.tag, self.attrs, self.parent, self.children, self.texts = tag, attrs, parent, [], []

    def iter(self):
        yield self
        for child in self.children:
            yield from child.iter()

    def find_all(self, tag: str, **attrs) -> list:
        return [
            n
            for n in self.iter()
            if n.tag == tag and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]

    def find(self, tag: str, **attrs):
        found = self.find_all(tag, **attrs)
        assert len(found) == 1, (tag, attrs, len(found))
        return found[0]

    def text(self) -> str:
        return "".join(self.texts) + "".join(c.text() for c in self.children)


class Dom(HTMLParser):
    """Just enough of an HTML tree for assertions: tags, attributes, text."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self._open = self.root
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self._open)
        self._open.children.append(node)
        if tag not in _VOID:
            self._open = node

    def handle_startendtag(self, tag, attrs):
        self._open.children.append(Node(tag, dict(attrs), self._open))

    def handle_endtag(self, tag):
        node = self._open
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self._open = node.parent

    def handle_data(self, data):
        self._open.texts.append(data)


def bars(dom, chart: str) -> list:
    """(row label, part, value) of every bar of a chart, top to bottom."""
    svg = dom.root.find("svg", data_chart=chart)
    labels = [t.children[0].text() for t in svg.find_all("text") if t.attrs.get("class") == "label"]
    rows = []
    label_index = -1
    for node in svg.children:  # labels and their bars alternate in document order
        if node.tag == "text" and node.attrs.get("class") == "label":
            label_index += 1
        elif node.tag == "rect":
            rows.append((labels[label_index], node.attrs["data-part"], int(node.attrs["data-value"])))
    return rows


def table_rows(dom, name: str) -> list:
    table = dom.root.find("table", data_table=name)
    return [[td.text() for td in tr.find_all("td")] for tr in table.find("tbody").find_all("tr")]


def check_hand_report(dom) -> None:
    """What the report of tests/export_fixtures.hand_profile() must show, worked out by hand."""
    assert [s.attrs["id"] for s in dom.root.find_all("section")] == [
        "summary",
        "steps",
        "recommendations",
        "ops",
        "kernels",
        "modules",
    ]
    # Step 0 runs 500..13000 = 12500 ns. Kernels 2500..3500 and 11000..11800: kernel 1800 (the memcpy
    # 3200..3300 lies under the first kernel, which has priority); runtime: launches 2000..2100 and
    # 10500..10600 = 200 (the memcpy call 3000..3050 is under a kernel too); cpu_exec: ops
    # 1000..5000 and 10000..12000 = 6000 minus the 1800 + 200 above = 4000; other 12500 - 6000 = 6500.
    assert bars(dom, "steps") == [
        ("step 0", "kernel", 1800),
        ("step 0", "runtime", 200),
        ("step 0", "cpu_exec", 4000),
        ("step 0", "other", 6500),
    ]
    # Own device time: addmm 1000 (gemm) + 100 (memcpy), mm 800; linear launched nothing itself: no bar.
    assert bars(dom, "ops") == [("aten::addmm", "kernel", 1100), ("aten::mm", "kernel", 800)]
    assert bars(dom, "kernels") == [("gemm_kernel", "no_tc", 1000), ("mm_kernel", "no_tc", 800)]
    assert [r[0] for r in table_rows(dom, "ops")] == ["aten::addmm", "aten::linear", "aten::mm"]
    assert table_rows(dom, "kernels")[0][:3] == ["gemm_kernel", "1", "1 µs"]  # shown in its unit
    assert table_rows(dom, "steps")[0][:2] == ["step 0", "12.5 µs"]
    cards = {c.attrs["data-card"]: c.children[1].text() for c in dom.root.find_all("div", **{"class": "card"})}
    assert cards["kernels tied to an op"] == "2 / 2" and cards["bwd ops tied to a fwd op"] == "1 / 1"
    assert cards["GPU busy"] == "14.4%"  # 1800 / 12500
    # Module tree: Net > fc, device time 1100 fwd (addmm) + 800 bwd (mm) = 1900 each.
    nodes = [n for n in dom.root.iter() if "tree-node" in n.attrs.get("class", "")]
    assert [(n.tag, n.attrs["data-module"], n.attrs["data-value"]) for n in nodes] == [
        ("details", "Net", "1900"),
        ("div", "Net.fc", "1900"),
    ]
    assert nodes[1].parent is nodes[0]
    widths = [
        s.attrs["style"] for s in nodes[0].find("summary").find_all("span") if "width" in s.attrs.get("style", "")
    ]
    assert widths[:2] == ["width:57.89%;background:#4e79a7", "width:42.11%;background:#f28e2b"]  # 1100/1900, 800/1900


def test_hand_profile_report_shows_the_views_numbers():
    check_hand_report(Dom(report_html(hand_profile())))


def test_report_of_a_live_cpu_profile():
    p = live_profile(steps=2)
    dom = Dom(report_html(p))
    steps = bars(dom, "steps")
    assert sorted({label for label, _, _ in steps}) == ["step 0", "step 1"]  # the total row is not a bar
    assert not {part for _, part, _ in steps} & {"kernel", "memcpy", "memset", "runtime"}  # no GPU
    overview = {r["step"]: r for r in p.overview().rows}
    for label, part, value in steps:
        assert overview[label][part] == value
    ops = bars(dom, "ops")
    by_op = {r["op"]: r["host_self"] for r in p.ops().rows}
    assert all(part == "cpu_exec" and by_op[label] == value for label, part, value in ops)
    assert [v for _, _, v in ops] == sorted((v for v in by_op.values() if v), reverse=True)[: len(ops)]
    modules = [n.attrs["data-module"] for n in dom.root.iter() if "tree-node" in n.attrs.get("class", "")]
    assert modules == [r["module"] for r in p.modules().rows]
    assert modules[:3] == ["TinyNet", "TinyNet.body", "TinyNet.body.0"]
    assert "No GPU kernels in this profile." in dom.root.find("section", id="kernels").text()


def hostile_profile() -> Profile:
    """Names that would be markup if they were not escaped."""
    ops = [OpRecord('<img src=x onerror="alert(1)">', 0, 1000, tid=1, module='Net.<script>alert("m")</script>')]
    apis = [ApiRecord("cudaLaunchKernel", 100, 150, correlation=1, tid=1)]
    kernels = [KernelRecord("<script>", 200, 700, correlation=1)]  # a kernel's short name is itself
    ranges = [RangeRecord("</section><h1>x", 0, 1000, tid=1, kind="step")]
    return Profile(
        ops=ops,
        apis=apis,
        kernels=kernels,
        ranges=ranges,
        meta={"source": "<b>src</b>", "path": '"><script>alert(2)</script>'},
    )


def test_everything_from_the_profile_is_escaped():
    html = report_html(hostile_profile())
    dom = Dom(html)
    assert len(dom.root.find_all("script")) == 1  # ours only
    assert not dom.root.find_all("img") and not dom.root.find_all("b") and not dom.root.find_all("h1")[1:]
    assert len(dom.root.find_all("section")) == 6
    text = dom.root.text()
    for hostile in ('<img src=x onerror="alert(1)">', "<b>src</b>", '"><script>alert(2)</script>', "</section><h1>x"):
        assert hostile in text, hostile  # shown as text, never as markup
    assert dom.root.find("span", title='Net.<script>alert("m")</script>')  # attribute values too


def test_report_needs_no_network():
    html = report_html(hand_profile())
    dom = Dom(html)
    for node in dom.root.iter():
        assert "src" not in node.attrs, node.tag
        assert node.attrs.get("href", "#").startswith("#"), node.attrs
    # The only URL is SVG's namespace name, which browsers never fetch.
    assert html.count("http") == html.count('xmlns="http://www.w3.org/2000/svg"')
    assert "url(" not in html and "@import" not in html


def test_save_html_writes_utf8_atomically(tmp_path):
    path = tmp_path / "report.html"
    hand_profile().save_html(path)
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


# ------------------------------------------------------------------------------------------------
# In a real browser


def browser() -> str | None:
    for name in (os.environ.get("PYPROF_LIVE_BROWSER"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def run_browser(tmp_path, *args) -> str:
    command = [
        browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'browser-profile'}",
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def png_size(path: Path) -> tuple:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])  # IHDR width, height


@pytest.mark.e2e
@pytest.mark.parametrize("which", ["hand", "live"])
def test_report_in_headless_chromium(tmp_path, which):
    if browser() is None:
        pytest.skip("no Chromium/Chrome found (Debian: apt-get install chromium; .ci/run installs it)")
    profile = hand_profile() if which == "hand" else live_profile(steps=3)
    page = tmp_path / "report.html"
    profile.save_html(page)

    dom = Dom(run_browser(tmp_path, "--dump-dom", page.as_uri()))
    html = dom.root.find("html")
    assert html.attrs.get("data-ready") == "1", "the report's script did not run to its end"
    if which == "hand":
        check_hand_report(dom)
    else:
        assert sorted({label for label, _, _ in bars(dom, "steps")}) == ["step 0", "step 1", "step 2"]
        assert len(table_rows(dom, "ops")) == len(profile.ops().rows)
        nodes = [n for n in dom.root.iter() if "tree-node" in n.attrs.get("class", "")]
        assert len(nodes) == len(profile.modules().rows)
    for table in dom.root.find_all("table"):
        assert "sortable" in table.attrs["class"] and table.find_all("th")

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"html_report_{which}.png"
    run_browser(tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", page.as_uri())
    assert png_size(shot) == (1280, 2000)
    print(f"screenshot: {shot}")
