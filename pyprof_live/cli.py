"""``pyprof-live FILE``: PyProf's ``prof`` report for saved profiles, nsys/nvprof SQLite and Kineto traces.

Flags follow PyProf's (``-c idx,dir,kernel,params,sil``, ``--csv``, ``-w 150``; space-separated
output by default, for awk). Bad input is one line on stderr naming the file, exit code 2.
``--chrome OUT`` / ``--html OUT`` write those exports instead of printing the report. Options that
cannot mean anything (a report option with an export, a table option with a summary view, an output
name of the wrong kind) are usage errors, found before the input is read.
``pyprof-live diff A B`` compares two profiles op by op; ``pyprof-live serve LOGDIR`` starts the dashboard.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from .errors import PyprofLiveError
from .profile import VIEW_NAMES
from .render.renderer import RENDERERS, renderer
from .report.columns import COLUMNS
from .safe_text import printable
from .store.files import file_to_replace

PYPROF_DEFAULT_COLUMNS = "idx,dir,sub,mod,op,kernel,params,sil"
#: Views of a run directory (many ranks) that one profile has not.
_RUN_ONLY_VIEWS = ("ranks", "stragglers", "skew")

#: (flag, attribute, what its file is, the endings that file's name must have).
_EXPORTS = (
    ("--chrome", "chrome", "a Chrome trace is .json or .json.gz", RENDERERS["chrome"].suffixes),
    ("--html", "html", "an HTML report is .html or .htm", RENDERERS["html"].suffixes),
)
#: (flag, attribute) of the options of the kernel table, and of every option of the printed report.
_TABLE_OPTIONS = (("-c", "columns"), ("--sort", "sort"))
_REPORT_OPTIONS = (
    ("--view", "view"),
    *_TABLE_OPTIONS,
    ("--limit", "limit"),
    ("--csv", "csv"),
    ("-w", "width"),
    ("--format", "format"),
)
_FORMAT_HELP = "a tabulate table format instead of aligned columns: github or pipe (Markdown), grid, simple, rst, ..."


def _line_width(text: str) -> int:
    """``-w``: characters per line. argparse's ``int`` would take 0, which the report reads as "no -w"."""
    try:
        width = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
    if width < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {width}")
    return width


def _table_format(text: str) -> str:
    """``--format``: one of tabulate's formats (tabulate is imported only when the option is given)."""
    from tabulate import tabulate_formats

    if text not in tabulate_formats:
        raise argparse.ArgumentTypeError(f"unknown table format {text!r}; valid: {', '.join(tabulate_formats)}")
    return text


def _text_format(args, default: str) -> str:
    """The text renderer's ``fmt`` the output options ask for (they are mutually exclusive)."""
    if args.csv:
        return "csv"
    if args.format:
        return args.format
    return "columns" if args.width else default


def _view_text(view, args) -> str:
    """A view (not the kernel table) as the output options ask, aligned columns by default."""
    return renderer("text").render(view, fmt=_text_format(args, "columns"), width=args.width, limit=args.limit)


def _column_help() -> str:
    width = max(len(c.name) for c in COLUMNS)
    return "columns (-c):\n" + "\n".join(f"  {c.name:<{width}}  {c.meaning}" for c in COLUMNS)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pyprof-live",
        description="Report what each op launched, from a saved pyprof_live profile, an Nsight Systems or "
        "nvprof SQLite export (.sqlite/.sql) or a PyTorch profiler trace (.json/.json.gz). "
        "`pyprof-live diff A B` compares two profiles op by op (see `pyprof-live diff --help`).",
        epilog=_column_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="profile to read (its kind is recognised from its content)")
    parser.add_argument(
        "-c", "--columns", help=f"comma-separated columns of the kernel table (default: {PYPROF_DEFAULT_COLUMNS})"
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--csv", action="store_true", help="CSV output, every field quoted")
    output.add_argument("-w", "--width", type=_line_width, help="aligned columns fitted into this many characters")
    output.add_argument("--format", metavar="FMT", type=_table_format, help=_FORMAT_HELP)
    parser.add_argument("--sort", help="sort rows by this column (sil, host, flops, bytes: largest first)")
    parser.add_argument("--limit", type=int, help="show only the first N rows")
    parser.add_argument(
        "--view",
        choices=(*VIEW_NAMES, *_RUN_ONLY_VIEWS),
        help="table (one row per kernel, default) or a summary; for a run directory: "
        "ranks, stragglers (default: both), skew, ops, kernels",
    )
    parser.add_argument(
        "--chrome",
        metavar="OUT",
        help="write a Chrome trace (Perfetto, chrome://tracing; .json or .json.gz) instead of the report",
    )
    parser.add_argument("--html", metavar="OUT", help="write a self-contained HTML report instead of the report")
    parser.add_argument(
        "--capture",
        metavar="TRACE",
        help="PyTorch profiler trace that captured the CUDA graphs FILE replays (vLLM, SGLang capture at start-up)",
    )
    parser.add_argument(
        "--provenance",
        metavar="LOG",
        help="TORCH_TRACE log of the same torch.compile run: ties Inductor kernels to the ops they fused "
        "(default: dedicated_log_torch_trace*.log beside FILE)",
    )
    return parser


def build_diff_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pyprof-live diff",
        description="Compare two profiles op by op (B - A): calls, host self time, device self time, flops; "
        "the largest change of time first.",
    )
    parser.add_argument("a", help="baseline profile")
    parser.add_argument("b", help="profile to compare with it")
    parser.add_argument(
        "--by", choices=("op", "op+shape"), default="op", help="match ops by name, or by name and input shapes"
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--csv", action="store_true", help="CSV output, every field quoted")
    output.add_argument("-w", "--width", type=_line_width, help="fit the lines into this many characters")
    output.add_argument("--format", metavar="FMT", type=_table_format, help=_FORMAT_HELP)
    parser.add_argument("--limit", type=int, help="show only the first N rows")
    return parser


def is_diff_command(argv) -> bool:
    """``diff A B``: the subcommand, unless a file named ``diff`` is here and A, B are not both files
    (then ``pyprof-live diff ...`` reports that file, as before the subcommand existed)."""
    if not argv or argv[0] != "diff":
        return False
    if not os.path.exists("diff"):
        return True
    return len(argv) >= 3 and os.path.exists(argv[1]) and os.path.exists(argv[2])


def is_serve_command(argv) -> bool:
    """``serve LOGDIR``: the subcommand, unless ``serve`` is a file here (then it is reported)."""
    return bool(argv) and argv[0] == "serve" and not os.path.isfile("serve")


def build_serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pyprof-live serve",
        description="The dashboard: a local web app over the runs (folders) and workers (profile files) of "
        "LOGDIR, updated while jobs write to it (profile(logdir=...)). Binds 127.0.0.1 unless --bind-all.",
    )
    parser.add_argument("logdir", help="folder of runs: each folder holding profile files is a run, each file a worker")
    parser.add_argument("--port", type=int, help="port to listen on (default: 6006, or the next free one)")
    parser.add_argument(
        "--bind-all", action="store_true", help="listen on every network interface, not only 127.0.0.1 (as TensorBoard)"
    )
    parser.add_argument("--poll", type=float, default=1.0, help="seconds between looks at LOGDIR for changes")
    return parser


def serve_main(argv) -> int:
    parser = build_serve_parser()
    args = parser.parse_args(argv)
    if not os.path.isdir(args.logdir):
        parser.exit(2, f"pyprof-live serve: error: {args.logdir}: not a directory\n")
    if args.poll <= 0:
        parser.error("--poll must be more than 0")
    from .dashboard.server import DashboardServer

    try:
        server = DashboardServer(args.logdir, port=args.port, bind_all=args.bind_all, poll=args.poll)
    except OSError as e:
        parser.exit(2, f"pyprof-live serve: error: {e}\n")
    sys.stderr.write(f"pyprof_live dashboard of {args.logdir} at {server.url} (Ctrl+C to stop)\n")
    sys.stderr.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    return 0


def _load(path, capture=None, provenance=None):
    """The profile at ``path``, with a progress bar (tqdm) on stderr while a long import reads it,
    when stderr is a terminal."""
    from .importers import load

    if not sys.stderr.isatty():
        return load(path, None, capture, provenance)
    from tqdm import tqdm

    with tqdm(total=100, desc="reading", unit="%", file=sys.stderr, leave=False) as bar:

        def progress(fraction: float, stage: str) -> None:
            bar.set_postfix_str(stage, refresh=False)
            bar.update(round(100 * min(max(fraction, 0.0), 1.0)) - bar.n)

        return load(path, progress, capture, provenance)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if is_diff_command(argv):
        return diff_main(argv[1:])
    if is_serve_command(argv):
        return serve_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    _check_options(parser, args)
    if os.path.isdir(args.file):
        return _run_main(parser, args)
    if args.view in _RUN_ONLY_VIEWS:
        parser.error(f"--view {args.view} is a view across ranks: give a run directory, not a file")
    try:
        profile = _load(args.file, args.capture, args.provenance)
        if args.chrome is not None or args.html is not None:
            return _export(profile, args)
        if args.view not in (None, "table"):
            text = _view_text(profile.view(args.view), args)
        else:
            columns = PYPROF_DEFAULT_COLUMNS if args.columns is None else args.columns
            if args.csv and args.limit is None:  # a million-kernel report streams instead of sitting in memory
                return _print_streamed(lambda out: profile.export_csv(out, sort=args.sort, columns=columns))
            text = profile.table(
                sort=args.sort,
                width=args.width,
                fmt=_text_format(args, "space"),
                limit=args.limit,
                columns=columns,
            )
    except PyprofLiveError as e:
        parser.exit(2, f"pyprof-live: error: {e}\n")
    return _print(text)


def _run_main(parser, args) -> int:
    """A run directory: the views across its ranks (or the merged trace, the run's HTML report)."""
    from .run import RUN_VIEW_NAMES, load_run

    if args.view is not None and args.view not in RUN_VIEW_NAMES:
        parser.error(f"--view {args.view} is a view of one profile; a run directory has {', '.join(RUN_VIEW_NAMES)}")
    _refuse_given(
        parser,
        args,
        (*_TABLE_OPTIONS, ("--capture", "capture"), ("--provenance", "provenance")),
        "one profile, not to a run directory",
    )
    try:
        run = load_run(args.file)
        if args.chrome is not None or args.html is not None:
            code = _export(run, args)
        else:
            names = [args.view] if args.view else ["ranks", "stragglers"]
            text = "\n\n".join(_view_text(run.view(name), args) for name in names)
            code = None
    except PyprofLiveError as e:
        parser.exit(2, f"pyprof-live: error: {e}\n")
    for problem in run.problems:
        sys.stderr.write(f"pyprof-live: warning: left out {problem}\n")
    return code if code is not None else _print(text)


def _check_options(parser, args) -> None:
    """Refuse, before the input is read, options that would be ignored or misread (exit code 2)."""
    exports = [flag for flag, attribute, _, _ in _EXPORTS if getattr(args, attribute) is not None]
    for flag, attribute, kind, endings in _EXPORTS:
        path = getattr(args, attribute)
        if path == "":
            parser.error(f"{flag} needs a file name")
        if path is not None and not path.endswith(endings) and not _written_into(path):
            parser.error(f"{flag} {printable(path)}: {kind}")
    if exports:
        _refuse_given(parser, args, _REPORT_OPTIONS, "the printed report, not to " + " and ".join(exports))
    elif args.view not in (None, "table"):
        _refuse_given(parser, args, _TABLE_OPTIONS, "the kernel table, not to --view " + args.view)


def _refuse_given(parser, args, options, where: str) -> None:
    """A usage error naming those of ``options`` that the command line gave, if any."""
    given = [flag for flag, attribute in options if getattr(args, attribute) not in (None, False)]
    if given:
        flags = given[0] if len(given) == 1 else ", ".join(given[:-1]) + " and " + given[-1]
        parser.error(f"{flags} {'applies' if len(given) == 1 else 'apply'} to {where}")


def _written_into(path) -> bool:
    """Whether the writer writes into ``path`` as it is rather than creating or replacing a file
    there: an existing FIFO, device, /dev/stdout (or says why it cannot: a directory). Its name
    then says nothing about what it holds, so its ending is not checked."""
    try:
        return file_to_replace(path) is None
    except OSError:  # a symlink loop: left to the write, which names the problem
        return False


def _export(profile, args) -> int:
    """Write the exports asked for, or none: every path is checked before the first write, and a write
    that fails still removes the files this run created. Errors are one line naming the path, exit code 2."""
    exports = [
        (path, what, write)
        for path, what, write in (
            (args.chrome, "Chrome trace", profile.export_chrome_trace),
            (args.html, "HTML report", profile.save_html),
        )
        if path
    ]
    for path, what, _ in exports:
        problem = _unwritable(path)
        if problem:
            return _cannot_write(what, path, problem)
    created: list[str] = []
    for path, what, write in exports:
        existed = os.path.lexists(path)
        try:
            write(path)
        except OSError as e:
            for earlier in created:  # a file that existed was replaced only on success: it stays
                with contextlib.suppress(OSError):
                    os.unlink(earlier)
            return _cannot_write(what, path, e.strerror or str(e))
        if not existed:
            created.append(path)
    for path, what, _ in exports:
        sys.stderr.write(f"wrote {what} {printable(path)}\n")
    return 0


def _unwritable(path) -> str | None:
    """Why ``path`` cannot be an output file, as far as can be told without writing it."""
    directory = os.path.dirname(path) or "."
    if not os.path.exists(directory):
        return f"directory {directory} does not exist"
    if not os.path.isdir(directory):
        return f"{directory} is not a directory"
    if os.path.isdir(path):
        return "is a directory"
    return None


def _cannot_write(what: str, path, problem: str) -> int:
    sys.stderr.write(f"pyprof-live: error: cannot write {what} {printable(path)}: {printable(problem)}\n")
    return 2


def diff_main(argv) -> int:
    parser = build_diff_parser()
    args = parser.parse_args(argv)
    from .report.diff import diff

    try:
        text = _view_text(diff(_load(args.a), _load(args.b), by=args.by), args)
    except PyprofLiveError as e:
        parser.exit(2, f"pyprof-live diff: error: {e}\n")
    return _print(text)


def _print(text: str) -> int:
    return _print_streamed(lambda out: out.write(text if text.endswith("\n") else text + "\n"))


def _print_streamed(write) -> int:
    """Call ``write(stream)`` with standard output as the stream; a closed pipe ends quietly."""
    try:
        write(_Stdout())
    except BrokenPipeError:  # `pyprof-live f.sqlite | head` is normal use
        sys.stderr.close()
    except OSError as e:  # a full disk, a file size limit
        sys.stderr.write(f"pyprof-live: error: cannot write to stdout: {e.strerror or e}\n")
        return 2
    return 0


def _write_stdout(text: str) -> None:
    """All of ``text``, or an OSError. An unbuffered stdout (PYTHONUNBUFFERED) drops the rest of a
    short write silently (a disk filling up), so the descriptor is written until everything is out."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # a stream without a descriptor (a notebook's, a test's)
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    sys.stdout.flush()
    # A character the terminal's encoding lacks (PYTHONIOENCODING=ascii, a C locale) is escaped, not fatal.
    data = memoryview(text.encode(sys.stdout.encoding or "utf-8", "backslashreplace"))
    while data:
        data = data[os.write(fd, data) :]


class _Stdout:
    """Standard output as a text stream whose every write goes out whole (:func:`_write_stdout`)."""

    @staticmethod
    def write(text: str) -> None:
        _write_stdout(text)
