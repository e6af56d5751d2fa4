"""``pyprof-live FILE``: PyProf's ``prof`` report for saved profiles, nsys/nvprof SQLite and Kineto traces.

Flags follow PyProf's (``-c idx,dir,kernel,params,sil``, ``--csv``, ``-w 150``; space-separated
output by default, for awk). Bad input is one line on stderr naming the file, exit code 2.
"""

from __future__ import annotations

import argparse
import sys

from .columns import COLUMNS
from .errors import PyprofLiveError

PYPROF_DEFAULT_COLUMNS = "idx,dir,sub,mod,op,kernel,params,sil"
VIEWS = ("table", "ops", "ops+shape", "modules", "kernels", "overview")


def _column_help() -> str:
    width = max(len(c.name) for c in COLUMNS)
    return "columns (-c):\n" + "\n".join(f"  {c.name:<{width}}  {c.meaning}" for c in COLUMNS)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pyprof-live",
        description="Report what each op launched, from a saved pyprof_live profile, an Nsight Systems or "
                    "nvprof SQLite export (.sqlite/.sql) or a PyTorch profiler trace (.json/.json.gz).",
        epilog=_column_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="profile to read (its kind is recognised from its content)")
    parser.add_argument("-c", "--columns", default=PYPROF_DEFAULT_COLUMNS,
                        help=f"comma-separated columns of the kernel table (default: {PYPROF_DEFAULT_COLUMNS})")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--csv", action="store_true", help="CSV output, every field quoted")
    output.add_argument("-w", "--width", type=int, help="aligned columns fitted into this many characters")
    parser.add_argument("--sort", help="sort rows by this column (sil, host, flops, bytes: largest first)")
    parser.add_argument("--limit", type=int, help="show only the first N rows")
    parser.add_argument("--view", choices=VIEWS, default="table",
                        help="table (one row per kernel, default) or a summary")
    return parser


def _progress(fraction: float, stage: str) -> None:
    """A one-line progress bar on stderr, for long imports in a terminal."""
    filled = int(30 * min(max(fraction, 0.0), 1.0))
    sys.stderr.write(f"\rreading [{'#' * filled}{'.' * (30 - filled)}] {fraction:4.0%} {stage:<24}")
    sys.stderr.flush()


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from .importers import load

    try:
        profile = load(args.file, progress=_progress if sys.stderr.isatty() else None)
        if sys.stderr.isatty():
            sys.stderr.write("\r" + " " * 70 + "\r")
        if args.view != "table":
            view = {
                "ops": lambda: profile.ops(), "ops+shape": lambda: profile.ops(by="op+shape"),
                "modules": profile.modules, "kernels": profile.kernels, "overview": profile.overview,
            }[args.view]()
            from .render.text import render_view

            fmt = "csv" if args.csv else "columns"
            text = render_view(view, fmt=fmt, width=args.width, limit=args.limit)
        else:
            fmt = "csv" if args.csv else "columns" if args.width else "space"
            text = profile.table(sort=args.sort, columns=args.columns, width=args.width, fmt=fmt, limit=args.limit)
    except PyprofLiveError as e:
        parser.exit(2, f"pyprof-live: error: {e}\n")
    try:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # `pyprof-live f.sqlite | head` is normal use
        sys.stderr.close()
    return 0
