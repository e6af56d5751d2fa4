"""Trace view at 1 M slices: time to first paint in headless Chromium, page weight, and frame time while
zooming — our canvas renderer side by side with flame-chart-js (a maintained canvas flame-chart
library from the npm registry), fed the very same data in the same browser in the same run.

The profile: a real Kineto trace (ResNet-50 training on a V100, ../shared/data) whose records are
repeated back to back in time until the ops, ranges, kernels and memcpy/memset drawn reach --slices
(links, correlation and sequence ids shifted per copy, as ../shared/tools/scale_kineto.py does to
files). Needs >4 GiB: run it under `flock /work/signals/bigmem.lock` on a shared machine.

    python benchmarks/dashboard_trace.py [--slices 1000000] [--peer] [--html]   # --peer: npm install flame-chart-js

Figures: Python time to build the trace payload (once per worker; the server caches it), bytes sent
(gzip'd, as the server sends them; and the one-file export's size), then in Chromium: first paint =
navigation start -> first frame of the trace drawn (payload cached), and the mean draw time of 20 zoom
steps from the whole profile inward (responsiveness). Machines are noisy: compare the ratios.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = Path(os.environ.get("PYPROF_LIVE_TEST_DATA", ROOT.parents[1] / "shared" / "data"))
TRACE = DATA / "kineto" / "kineto_tbplugin_resnet50_v100dgxs_oldformat.pt.trace.json.gz"
PEER_VERSION = "flame-chart-js@3.3.0"


def repeated_profile(slices: int):
    """The real trace's records repeated in time until about ``slices`` slices are drawn."""
    from pyprof_live import load
    from pyprof_live.profile import Profile
    from pyprof_live.records import NO_LINK

    base = load(TRACE).records
    per_copy = len(base.ops) + len(base.ranges) + len(base.kernels) + len(base.memops)
    copies = max(1, round(slices / per_copy))
    items = [x for name in ("ops", "apis", "kernels", "memops", "ranges") for x in getattr(base, name)]
    first, last = min(x.start for x in items), max(x.end for x in items)
    span = last - first + 1000
    top = {
        "correlation": max([a.correlation for a in base.apis] + [k.correlation for k in base.kernels] + [0]) + 1,
        "external_id": max([o.external_id for o in base.ops] + [a.external_id for a in base.apis] + [0]) + 1,
        "seq": max([o.seq for o in base.ops] + [o.altseq for o in base.ops] + [0]) + 1,
    }

    def shifted(record, k):
        changes = {"start": record.start + k * span, "end": record.end + k * span}
        for field, step in (
            ("correlation", "correlation"),
            ("external_id", "external_id"),
            ("seq", "seq"),
            ("altseq", "seq"),
        ):
            value = getattr(record, field, NO_LINK)
            if hasattr(record, field) and value != NO_LINK:
                changes[field] = value + k * top[step]
        return dataclasses.replace(record, **changes)

    lists = {
        name: [shifted(x, k) for k in range(copies) for x in getattr(base, name)]
        for name in ("ops", "apis", "kernels", "memops", "ranges")
    }
    return Profile(**lists, devices=list(base.devices), meta={"source": "kineto", "copies": copies}), copies


PEER_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0}</style></head><body>
<canvas id="c" width="1400" height="800"></canvas>
<script src="flame-chart.min.js"></script><script src="peer.js"></script></body></html>"""

# flame-chart-js wants a tree of node objects per track: build it from the same columns our page reads.
PEER_SCRIPT = """
(async function () {
  const buffer = await (await fetch('trace.bin')).arrayBuffer();
  const length = new DataView(buffer).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, length)));
  const start0 = 4 + length + ((8 - ((4 + length) % 8)) % 8);
  const body = buffer.slice(start0);
  const T = { d: Float64Array, I: Uint32Array, i: Int32Array, B: Uint8Array };
  const c = {};
  header.columns.forEach(col => { c[col.name] = new T[col.type](body, col.offset, col.length); });
  const lanesOfTrack = header.tracks.map(t => t);
  const plugins = [new flameChartJs.TimeGridPlugin()];
  let i = 0;
  for (const track of lanesOfTrack) {
    const roots = [], stack = [];
    const last = track.lane + track.lanes;
    const items = [];
    while (i < header.slices && c.lane[i] < last) { items.push(i); i++; }
    items.sort((a, b) => c.start[a] - c.start[b] || c.dur[b] - c.dur[a]);
    for (const k of items) {
      const node = { name: header.strings[c.name[k]], start: c.start[k] / 1e6, duration: c.dur[k] / 1e6 };
      while (stack.length && stack[stack.length - 1].start + stack[stack.length - 1].duration <= node.start) stack.pop();
      if (stack.length) { const p = stack[stack.length - 1]; (p.children = p.children || []).push(node); } else roots.push(node);
      stack.push(node);
    }
    plugins.push(new flameChartJs.FlameChartPlugin({ data: roots, name: track.process + ' ' + track.name }));
  }
  const canvas = document.getElementById('c');
  const chart = new flameChartJs.FlameChartContainer({ canvas, plugins, settings: { options: { timeUnits: 'ms' } } });
  chart.render();
  requestAnimationFrame(() => { window.firstPaint = performance.now(); window.chart = chart; window.span = header.span / 1e6; });
})();
"""


def browse(url: str, peer: bool) -> dict:
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT))
    from tests.dashboard_fixtures import CHROMIUM_ARGS, browser_path, wait_until

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=browser_path(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        received = []
        page.on("response", lambda r: received.append(int(r.headers.get("content-length") or 0)))
        page.goto(url)
        if peer:
            wait_until(page, "!!window.firstPaint", timeout=600)
            paint = page.evaluate("window.firstPaint")
            # its render runs in the next animation frame: time from that frame's start to the end of it
            frames = page.evaluate(
                """async () => { const ch = window.chart, out = [];
                for (let k = 1; k <= 20; k++) {
                  ch.setZoom(0, window.span / Math.pow(1.4, k));
                  out.push(await new Promise(done => requestAnimationFrame(ts => done(performance.now() - ts))));
                }
                return out; }"""
            )
        else:
            wait_until(page, "!!(window.pyprofTrace && window.pyprofTrace.paintedAt)", timeout=600)
            paint = page.evaluate("window.pyprofTrace.paintedAt")
            frames = page.evaluate(
                """() => { const tv = window.pyprofTrace, out = [];
                for (let k = 1; k <= 20; k++) { tv.setRange(0, tv.h.span / Math.pow(1.4, k)); out.push(tv.stats.ms); }
                return out; }"""
            )
        heap = page.evaluate("performance.memory ? performance.memory.usedJSHeapSize : 0")
        browser.close()
    return {
        "paint_ms": paint,
        "frame_ms": statistics.mean(frames),
        "frame_max_ms": max(frames),
        "bytes": sum(received),
        "heap": heap,
    }


def peer(tmp: Path, payload: bytes) -> dict:
    """flame-chart-js in the same browser, on the same bytes, its page served from a plain folder."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    subprocess.run(["npm", "install", "--silent", "--prefix", str(tmp / "npm"), PEER_VERSION], check=True)
    site = tmp / "site"
    site.mkdir()
    shutil.copy(tmp / "npm" / "node_modules" / "flame-chart-js" / "dist" / "index.min.js", site / "flame-chart.min.js")
    (site / "peer.html").write_text(PEER_PAGE)
    (site / "peer.js").write_text(PEER_SCRIPT)
    (site / "trace.bin").write_bytes(payload)
    quiet = type("Quiet", (SimpleHTTPRequestHandler,), {"log_message": lambda *a: None})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(quiet, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        return browse(f"http://127.0.0.1:{httpd.server_address[1]}/peer.html", peer=True)
    finally:
        httpd.shutdown()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slices", type=int, default=1_000_000)
    parser.add_argument("--html", action="store_true", help="also build the one-file export (slow: every view)")
    parser.add_argument(
        "--peer", action="store_true", help=f"also measure {PEER_VERSION} (npm install into a temp dir)"
    )
    args = parser.parse_args()
    if not TRACE.exists():
        print(f"skipped: {TRACE} is absent (../shared/data)")
        return 0
    from pyprof_live.render.html_app import one_file_page
    from pyprof_live.render.trace_data import trace_bytes

    started = time.perf_counter()
    profile, copies = repeated_profile(args.slices)
    records = profile.records
    drawn = len(records.ops) + len(records.ranges) + len(records.kernels) + len(records.memops)
    print(
        f"profile: {copies} copies of {TRACE.name}: {drawn:,} slices ({time.perf_counter() - started:.1f} s to build)"
    )
    profile.correlation
    started = time.perf_counter()
    payload = trace_bytes(profile)
    build = time.perf_counter() - started
    packed = gzip.compress(payload, compresslevel=5)
    print(
        f"trace payload: built in {build:.1f} s; {len(payload) / 1e6:.1f} MB, {len(packed) / 1e6:.1f} MB gzip'd as served"
    )
    if args.html:
        started = time.perf_counter()
        html = one_file_page([("bench", "bench", profile)])
        seconds = time.perf_counter() - started
        print(f"one-file export (p.save_html): {len(html.encode()) / 1e6:.1f} MB, built in {seconds:.1f} s")

    with tempfile.TemporaryDirectory() as tmp:
        logdir = Path(tmp) / "logdir"
        logdir.mkdir()
        (logdir / "bench.pplive").write_bytes(b"")  # listed as worker "bench"; its payload is injected below
        import pyprof_live

        server = pyprof_live.serve(logdir, port=0)
        worker = server.dashboard.logdir.worker(".", "bench")
        server.dashboard._payloads[("trace", worker)] = packed  # the server's cache, as after a first request
        try:
            ours = browse(server.url + "#view=trace&run=.&worker=bench", peer=False)
            theirs = peer(Path(tmp), payload) if args.peer and shutil.which("npm") else None
        finally:
            server.stop()

    print(f"\n{'':34}{'pyprof_live canvas':>20}{'flame-chart-js':>18}{'ratio':>8}")
    rows = [
        ("first paint (ms)", "paint_ms"),
        ("zoom frame, mean (ms)", "frame_ms"),
        ("zoom frame, max (ms)", "frame_max_ms"),
        ("bytes received (MB)", "bytes"),
        ("JS heap (MB)", "heap"),
    ]
    for label, key in rows:
        scale = 1e6 if key in ("bytes", "heap") else 1
        a = ours[key] / scale
        b = theirs[key] / scale if theirs else None
        ratio = f"{b / a:.1f}x" if b and a else "-"
        print(f"{label:34}{a:>20.1f}{(f'{b:.1f}' if b is not None else 'n/a'):>18}{ratio:>8}")
    print(f"page weight (served, all responses): {ours['bytes'] / 1e6:.1f} MB")
    print("\ngoal (issue #15): first paint <= 3000 ms and page <= 30 MB at 1 M events")
    return 0


if __name__ == "__main__":
    sys.exit(main())
