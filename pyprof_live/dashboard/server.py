"""``pyprof-live serve LOGDIR``: the dashboard as a local web app (the standard library's HTTP server).

Safe by default: it binds 127.0.0.1 (``--bind-all`` opens it to the network, as TensorBoard's flag
does) and then answers only requests addressed to a loopback name (a web page elsewhere cannot reach
it through DNS rebinding); it answers GET only; it serves its own page and files by name and the
profiles of LOGDIR by run and worker name, never by a path from the request (see logdir.py); every
response forbids scripts from anywhere but itself (Content-Security-Policy). A watcher rescans LOGDIR
every ``poll`` seconds and tells open pages over server-sent events when a run changed.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections import OrderedDict
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from ..errors import PyprofLiveError
from ..render.html_app import ASSETS, asset, served_page
from ..render.page_units import UNIT_RULES
from .logdir import LogDir

DEFAULT_PORT = 6006  # TensorBoard's, whose profiler plugin this page succeeds
PORT_TRIES = 10  # without --port, the next free port after the default is taken
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
}
_CACHED_PAYLOADS = 24


class _NotFound(Exception):
    """A run, worker, view or file the server does not have (404, one line)."""


class Dashboard:
    """What the handlers share: the log directory, the payload cache and the change watcher."""

    def __init__(self, logdir, poll: float = 1.0):
        self.logdir = LogDir(logdir)
        self.poll = poll
        self._payloads: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self._changed = threading.Condition()
        self.generation = 0
        self.runs_json = self._runs_json()
        self.stopping = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="pyprof-live-watch", daemon=True)
        self._watcher.start()

    def _runs_json(self) -> bytes:
        runs = [
            {"name": r.name, "workers": [{"name": w.name, "version": w.version} for w in r.workers]}
            for r in self.logdir.runs()
        ]
        return json.dumps({"units": UNIT_RULES, "runs": runs}, ensure_ascii=False).encode()

    def _watch(self) -> None:
        while not self.stopping.wait(self.poll):
            try:
                current = self._runs_json()
            except OSError:
                continue  # LOGDIR briefly unreadable: try again at the next tick
            if current != self.runs_json:
                with self._changed:
                    self.runs_json = current
                    self.generation += 1
                    self._changed.notify_all()

    def wait_for_change(self, generation: int, timeout: float) -> int:
        with self._changed:
            self._changed.wait_for(lambda: self.generation != generation or self.stopping.is_set(), timeout)
            return self.generation

    def stop(self) -> None:
        self.stopping.set()
        with self._changed:
            self._changed.notify_all()

    # -- payloads ------------------------------------------------------------------------------

    def worker(self, run: str, name: str):
        worker = self.logdir.worker(run, name)
        if worker is None:
            raise _NotFound(f"no worker {name!r} in run {run!r}")
        return worker

    def payload(self, kind: str, key: tuple, build) -> bytes:
        """gzip'd bytes of a payload, built once per key (keys hold the workers' versions)."""
        cache_key = (kind, *key)
        with self._lock:
            if cache_key in self._payloads:
                self._payloads.move_to_end(cache_key)
                return self._payloads[cache_key]
        data = gzip.compress(build(), compresslevel=5)
        with self._lock:
            self._payloads[cache_key] = data
            while len(self._payloads) > _CACHED_PAYLOADS:
                self._payloads.popitem(last=False)
        return data

    def views(self, run: str, name: str) -> bytes:
        from ..render.pages import profile_payload

        worker = self.worker(run, name)
        return self.payload("views", (worker,), lambda: _json(profile_payload(self.logdir.load(worker))))

    def trace(self, run: str, name: str) -> bytes:
        from ..render.trace_data import trace_bytes

        worker = self.worker(run, name)
        return self.payload("trace", (worker,), lambda: trace_bytes(self.logdir.load(worker)))

    def distributed(self, run: str) -> bytes:
        from .runviews import workers_payload

        found = next((r for r in self.logdir.runs() if r.name == run), None)
        if found is None:
            raise _NotFound(f"no run {run!r}")
        return self.payload(
            "distributed",
            found.workers,
            lambda: _json(workers_payload([(w.name, self.logdir.load(w)) for w in found.workers])),
        )

    def diff(self, a: tuple, b: tuple, by: str) -> bytes:
        from ..render.pages import view_payload
        from ..report.diff import diff

        if by not in ("op", "op+shape"):
            raise _NotFound(f"no diff by {by!r}")
        wa, wb = self.worker(*a), self.worker(*b)
        return self.payload(
            "diff", (wa, wb, by), lambda: _json(view_payload(diff(self.logdir.load(wa), self.logdir.load(wb), by=by)))
        )


def _json(data) -> bytes:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


class _Handler(BaseHTTPRequestHandler):
    server_version = "pyprof_live"
    dashboard: Dashboard  # set on the subclass made for each server
    loopback_only: bool

    def log_message(self, format, *args):
        pass  # a notebook or terminal should not fill with one line per request

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        url = urlsplit(self.path)
        if self.loopback_only and not _addressed_to_loopback(self.headers.get("Host", "")):
            return self._text(HTTPStatus.FORBIDDEN, "this dashboard answers only requests to 127.0.0.1 or localhost")
        query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        try:
            route = _ROUTES.get(url.path)
            if route is not None:
                return route(self, query)
            if url.path.startswith("/static/"):
                name = url.path[len("/static/") :]
                if name in ASSETS:
                    return self._send(HTTPStatus.OK, asset(name), ASSETS[name], cache=True)
            raise _NotFound(f"nothing at {url.path}")
        except _NotFound as e:
            return self._text(HTTPStatus.NOT_FOUND, str(e))
        except KeyError as e:
            return self._text(HTTPStatus.BAD_REQUEST, f"missing parameter {e}")
        except PyprofLiveError as e:  # a worker file that cannot be read: the page shows this line
            return self._text(HTTPStatus.UNPROCESSABLE_ENTITY, str(e))
        except (BrokenPipeError, ConnectionResetError):
            return None

    def do_POST(self):
        self._text(HTTPStatus.METHOD_NOT_ALLOWED, "read-only: only GET")

    do_PUT = do_DELETE = do_PATCH = do_POST

    # -- routes --------------------------------------------------------------------------------

    def _page(self, query):
        self._send(HTTPStatus.OK, served_page(), "text/html; charset=utf-8")

    def _runs(self, query):
        self._send(HTTPStatus.OK, self.dashboard.runs_json, "application/json")

    def _views(self, query):
        self._send(HTTPStatus.OK, self.dashboard.views(query["run"], query["worker"]), "application/json", gzipped=True)

    def _trace(self, query):
        body = self.dashboard.trace(query["run"], query["worker"])
        self._send(HTTPStatus.OK, body, "application/octet-stream", gzipped=True)

    def _distributed(self, query):
        self._send(HTTPStatus.OK, self.dashboard.distributed(query["run"]), "application/json", gzipped=True)

    def _diff(self, query):
        a, b = (query["a_run"], query["a_worker"]), (query["b_run"], query["b_worker"])
        self._send(HTTPStatus.OK, self.dashboard.diff(a, b, query.get("by", "op")), "application/json", gzipped=True)

    def _events(self, query):
        """Server-sent events: the run list now, then again whenever LOGDIR changes."""
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        for name, value in _SECURITY_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        dashboard = self.dashboard
        generation = -1
        last_sent = 0.0
        try:
            while not dashboard.stopping.is_set():
                current = dashboard.generation
                if current != generation:
                    generation = current
                    self.wfile.write(b"event: runs\ndata: " + dashboard.runs_json + b"\n\n")
                    self.wfile.flush()
                    last_sent = time.monotonic()
                elif time.monotonic() - last_sent > 15:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                    last_sent = time.monotonic()
                dashboard.wait_for_change(generation, timeout=5)
        except OSError:
            pass  # the page went away

    # -- responses -----------------------------------------------------------------------------

    def _send(self, status, body: bytes, content_type: str, gzipped: bool = False, cache: bool = False):
        if gzipped and "gzip" not in self.headers.get("Accept-Encoding", ""):
            body, gzipped = gzip.decompress(body), False
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if gzipped:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Cache-Control", "max-age=60" if cache else "no-store")
        for name, value in _SECURITY_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _text(self, status, message: str):
        self._send(status, message.encode(), "text/plain; charset=utf-8")


_ROUTES = {
    "/": _Handler._page,
    "/index.html": _Handler._page,
    "/api/runs": _Handler._runs,
    "/api/views": _Handler._views,
    "/api/trace": _Handler._trace,
    "/api/distributed": _Handler._distributed,
    "/api/diff": _Handler._diff,
    "/api/events": _Handler._events,
}


def _addressed_to_loopback(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name in _LOOPBACK_NAMES


class DashboardServer:
    """A running dashboard: ``.url``, ``.stop()``; in a notebook it shows as a link."""

    def __init__(self, logdir, port: int | None = None, bind_all: bool = False, poll: float = 1.0):
        self.dashboard = Dashboard(logdir, poll=poll)
        handler = type("Handler", (_Handler,), {"dashboard": self.dashboard, "loopback_only": not bind_all})
        host = "" if bind_all else "127.0.0.1"
        ports = [port] if port is not None else range(DEFAULT_PORT, DEFAULT_PORT + PORT_TRIES)
        error: OSError | None = None
        for candidate in ports:
            try:
                self.httpd = ThreadingHTTPServer((host, candidate), handler)
                break
            except OSError as e:
                error = e
        else:
            self.dashboard.stop()
            raise OSError(
                f"cannot listen on port {ports[0]}"
                + ("" if port is not None else f"..{ports[-1]}")
                + f": {(error.strerror or error) if error is not None else 'no port to try'}"
            )
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://{'localhost' if not bind_all else _hostname()}:{self.port}/"
        self._thread: threading.Thread | None = None

    def serve_forever(self) -> None:
        try:
            self.httpd.serve_forever(poll_interval=0.25)
        finally:
            self.dashboard.stop()

    def start(self) -> DashboardServer:
        thread = self._thread = threading.Thread(target=self.serve_forever, name="pyprof-live-serve", daemon=True)
        thread.start()
        return self

    def stop(self) -> None:
        self.dashboard.stop()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def __repr__(self):
        return f"<pyprof_live dashboard {self.url} logdir={self.dashboard.logdir.root}>"

    def _repr_html_(self):
        from html import escape

        return f'<a href="{escape(self.url)}" target="_blank">pyprof_live dashboard: {escape(self.url)}</a>'


def _hostname() -> str:
    import socket

    return socket.gethostname()


def serve(logdir, port: int | None = None, bind_all: bool = False, poll: float = 1.0) -> DashboardServer:
    """Start the dashboard over ``logdir`` in the background (for notebooks and scripts); returns the
    running server (``.url``, ``.stop()``). ``port`` None takes 6006 or the next free port."""
    return DashboardServer(logdir, port=port, bind_all=bind_all, poll=poll).start()
