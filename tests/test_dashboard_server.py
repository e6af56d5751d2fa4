"""The dashboard's server over HTTP: what it lists and serves, and what it refuses (paths out of the log
directory, symlinks out of it, other hosts, writes); the CLI's `serve`; payloads in human units."""

from __future__ import annotations

import gzip
import http.client
import json
import os
import subprocess
import sys
import time
import urllib.request
from urllib.error import HTTPError

import pytest

import pyprof_live
from pyprof_live.dashboard.logdir import LogDir
from pyprof_live.render.pages import view_payload

from .dashboard_fixtures import make_logdir
from .export_fixtures import hand_profile


@pytest.fixture
def served(tmp_path):
    logdir = tmp_path / "logs"
    profiles = make_logdir(logdir)
    outside = tmp_path / "outside"
    outside.mkdir()
    hand_profile().save(outside / "secret.pplive")
    os.symlink(outside / "secret.pplive", logdir / "exp1" / "leak.pplive")  # a file symlink out of LOGDIR
    os.symlink(outside, logdir / "linked-run")  # a folder symlink out of LOGDIR
    os.symlink(logdir / "exp2" / "cpu.pplive", logdir / "exp2" / "alias.pplive")  # a symlink that stays inside
    server = pyprof_live.serve(logdir, port=0, poll=0.1)
    try:
        yield server, profiles, logdir
    finally:
        server.stop()


def get(server, path: str, headers=None):
    """(status, headers, body) of a raw GET: the path is sent exactly as written (no normalising)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.request("GET", path, headers=headers or {})
    response = connection.getresponse()
    body = response.read()
    if response.getheader("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    connection.close()
    return response.status, dict(response.getheaders()), body


def test_runs_and_workers_of_the_log_directory(served):
    server, _, _ = served
    status, headers, body = get(server, "/api/runs")
    assert status == 200
    runs = {r["name"]: [w["name"] for w in r["workers"]] for r in json.loads(body)["runs"]}
    # the symlink out of LOGDIR and the linked folder are not listed; the symlink inside is
    assert runs == {"exp1": ["worker0", "worker1"], "exp2": ["alias", "cpu"]}
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"


def test_views_payload_holds_raw_numbers_and_human_text(served):
    server, profiles, _ = served
    status, _, body = get(server, "/api/views?run=exp1&worker=worker0", {"Accept-Encoding": "gzip"})
    assert status == 200
    ops = json.loads(body)["views"]["ops"]
    addmm = ops["rows"][[r[0] for r in ops["rows"]].index("aten::addmm")]
    text = ops["text"][[r[0] for r in ops["rows"]].index("aten::addmm")]
    columns = [c["name"] for c in ops["columns"]]
    # addmm 1000..4000: host 3000 ns; its own kernel 1000 ns + memcpy 100 ns = dev_self 1100 ns
    assert addmm[columns.index("host")] == 3000 and text[columns.index("host")] == "3 µs"
    assert addmm[columns.index("dev_self")] == 1100 and text[columns.index("dev_self")] == "1.1 µs"
    # flops of addmm(b[4], x[8,16], w[16,4]) by the formula registry: 2*M*N*K = 2*8*4*16 = 1024
    assert addmm[columns.index("flops")] == 1024 and text[columns.index("flops")] == "1.02 kFLOP"
    assert ops == view_payload(profiles[("exp1", "worker0")].ops())


@pytest.mark.parametrize(
    "path",
    [
        "/static/../../../../etc/passwd",
        "/static/%2e%2e/%2e%2e/etc/passwd",
        "/../../etc/passwd",
        "//etc/passwd",
        "/etc/passwd",
        "/static//etc/passwd",
        "/static/app.js/../../pyprof_live/__init__.py",
        "/api/views?run=../../../etc&worker=passwd",
        "/api/views?run=/etc&worker=passwd",
        "/api/views?run=exp1&worker=../exp2/cpu",
        "/api/views?run=exp1&worker=/etc/passwd",
        "/api/trace?run=.&worker=" + "%2Fetc%2Fpasswd",
        "/api/views?run=exp1&worker=leak",  # the symlink out of LOGDIR, by name
        "/api/views?run=linked-run&worker=secret",  # the folder symlink out of LOGDIR
    ],
)
def test_paths_out_of_the_log_directory_are_refused(served, path):
    server, _, _ = served
    status, _, body = get(server, path)
    assert status == 404, (path, status)
    assert body.startswith((b"nothing at ", b"no worker ")) and b"\n" not in body  # one line, no file content


def test_only_its_own_files_are_served(served):
    server, _, _ = served
    for name, kind in (("app.js", "text/javascript"), ("trace.js", "text/javascript"), ("app.css", "text/css")):
        status, headers, body = get(server, f"/static/{name}")
        assert status == 200 and headers["Content-Type"] == kind and body
    status, _, _ = get(server, "/static/app.html")
    assert status == 404


def test_other_hosts_and_writes_are_refused(served):
    server, _, _ = served
    # a page of another site reaching 127.0.0.1 through DNS rebinding sends its own host name
    status, _, _ = get(server, "/api/runs", {"Host": f"attacker.example:{server.port}"})
    assert status == 403
    assert get(server, "/api/runs", {"Host": f"localhost:{server.port}"})[0] == 200
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.request("POST", "/api/runs", body=b"x")
    assert connection.getresponse().status == 405


def test_binds_loopback_unless_bind_all(tmp_path):
    server = pyprof_live.serve(tmp_path, port=0)
    try:
        assert server.httpd.server_address[0] == "127.0.0.1"
        assert server.url.startswith("http://localhost:")
    finally:
        server.stop()


def test_a_file_that_is_not_a_profile_is_one_line_on_the_page(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "broken.json").write_text("{not json")
    server = pyprof_live.serve(tmp_path, port=0)
    try:
        status, _, body = get(server, "/api/views?run=run&worker=broken")
    finally:
        server.stop()
    assert status == 422
    assert body.decode().startswith(str(tmp_path / "run" / "broken.json")) and "\n" not in body.decode()


def test_new_runs_appear_and_changes_are_announced(served):
    server, _, logdir = served
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.request("GET", "/api/events")
    events = connection.getresponse()
    assert events.getheader("Content-Type") == "text/event-stream"
    first = events.fp.readline() + events.fp.readline()
    assert first.startswith(b"event: runs\ndata: ")
    (logdir / "exp3").mkdir()
    hand_profile().save(logdir / "exp3" / "new.pplive")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = events.fp.readline()
        if line.startswith(b"data: ") and b'"exp3"' in line:
            break
    else:
        pytest.fail("no event announced the new run")
    connection.close()


def test_workers_are_named_as_the_run_layout_names_them(tmp_path):
    (tmp_path / "job").mkdir()
    for name in (
        "rank-0.1700000000000.parquet",
        "rank-1.steps-2-4.1700000000001.parquet",
        "worker0.1623143089861.pt.trace.json.gz",
        "net.sqlite",
        "notes.txt",
        ".hidden.json",
    ):
        (tmp_path / "job" / name).write_bytes(b"")
    (run,) = LogDir(tmp_path).runs()
    assert [w.name for w in run.workers] == ["net", "rank-0", "rank-1[steps 2-4]", "worker0"]


def test_logdir_must_be_a_directory(tmp_path):
    with pytest.raises(NotADirectoryError):
        LogDir(tmp_path / "missing")


@pytest.mark.e2e
def test_cli_serve_starts_without_torch_and_refuses_a_missing_logdir(tmp_path):
    missing = subprocess.run(
        [sys.executable, "-m", "pyprof_live", "serve", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"pyprof-live serve: error: {tmp_path / 'nope'}: not a directory"
    make_logdir(tmp_path)
    code = (
        "import sys, threading, urllib.request\n"
        "from pyprof_live.cli import main\n"
        "watchdog = threading.Timer(60, lambda: __import__('os')._exit(3))\n"
        "watchdog.daemon = True\n"
        "watchdog.start()\n"
        "sys.argv = ['pyprof-live', 'serve', sys.argv[1], '--port', '0']\n"
        "import pyprof_live.dashboard.server as s\n"
        "real = s.DashboardServer.serve_forever\n"
        "def once(self):\n"
        "    threading.Thread(target=real, args=(self,), daemon=True).start()\n"
        "    urllib.request.urlopen(self.url + 'api/runs').read()\n"
        "    print('torch' in sys.modules)\n"
        "    body = urllib.request.urlopen(self.url + 'api/views?run=exp1&worker=worker0').read()\n"
        "    print(len(body) > 100)\n"
        "    self.stop()\n"
        "s.DashboardServer.serve_forever = once\n"
        "main(sys.argv[1:])\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "dashboard of" in done.stderr and "http://localhost:" in done.stderr
    assert done.stdout.split() == ["False", "True"]  # started and listed LOGDIR without importing torch


def test_page_serves_from_urllib(served):
    server, _, _ = served
    with urllib.request.urlopen(server.url) as response:
        page = response.read().decode()
    assert '<script src="static/app.js">' in page and "<script>" not in page  # no inline script: CSP holds
    with pytest.raises(HTTPError):
        urllib.request.urlopen(server.url + "api/trace?run=exp1&worker=nobody")
