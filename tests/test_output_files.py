"""Where output goes: symlinks, FIFOs and open descriptors (/dev/stdout) are written through, not
replaced; errors name the user's path; the CLI checks every output before writing and fails on a
full stdout with one line, exit code 2."""

from __future__ import annotations

import errno
import gzip
import json
import os
import resource
import stat
import sys

import pytest

from pyprof_live.cli import main
from pyprof_live.profile import Profile
from pyprof_live.store.files import write_text_atomically

from .export_fixtures import hand_profile
from .fresh_process import run_pyprof_live


def write_new(out):
    out.write("new")


def listing(directory):
    return sorted(p.name for p in directory.iterdir())


# ------------------------------------------------------------------------------------------------
# write_text_atomically


def test_a_symlink_is_followed_and_stays_a_link(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "links").mkdir()
    real = tmp_path / "data" / "real.json"
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "links" / "link.json"
    link.symlink_to("../data/real.json")
    write_text_atomically(link, write_new)
    assert link.is_symlink() and os.readlink(link) == "../data/real.json"
    assert real.read_text() == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o600  # the replaced file's mode is kept
    assert listing(tmp_path / "data") == ["real.json"] and listing(tmp_path / "links") == ["link.json"]


def test_a_dangling_symlink_gets_its_target_created(tmp_path):
    link = tmp_path / "link.json.gz"
    link.symlink_to("target.json.gz")
    write_text_atomically(link, write_new)
    assert link.is_symlink() and gzip.decompress((tmp_path / "target.json.gz").read_bytes()) == b"new"
    # a new file gets what a plain open() gives it, not mkstemp's owner-only mode
    assert stat.S_IMODE((tmp_path / "target.json.gz").stat().st_mode) == 0o666 & ~current_umask()


def test_a_failed_write_through_a_symlink_leaves_the_target_and_no_temp_file(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    (tmp_path / "link.json").symlink_to("real.json")

    def fail(out):
        out.write("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_text_atomically(tmp_path / "link.json", fail)
    assert real.read_text() == "old" and (tmp_path / "link.json").is_symlink()
    assert listing(tmp_path) == ["link.json", "real.json"]


def test_a_fifo_is_written_into_not_replaced(tmp_path):
    fifo = tmp_path / "trace.json.gz"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader first, so opening it to write does not block
    try:
        write_text_atomically(fifo, write_new)
        received = os.read(reader, 1 << 16)
    finally:
        os.close(reader)
    assert gzip.decompress(received) == b"new"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert listing(tmp_path) == ["trace.json.gz"]


def test_an_open_descriptor_path_is_written_into(tmp_path):
    """/dev/stdout is a link to /proc/self/fd/1: a pipe is written into, and so is a regular file the
    shell opened (``>>`` appends); replacing the file would leave the descriptor on a deleted one."""
    read_end, write_end = os.pipe()
    try:
        write_text_atomically(f"/proc/self/fd/{write_end}", write_new)
        os.close(write_end)
        assert os.read(read_end, 100) == b"new"
    finally:
        os.close(read_end)
    log = tmp_path / "log.txt"
    with open(log, "ab") as appended:
        appended.write(b"before\n")
        appended.flush()
        inode = os.fstat(appended.fileno()).st_ino
        write_text_atomically(f"/proc/self/fd/{appended.fileno()}", write_new)
    assert log.read_text() == "before\nnew" and log.stat().st_ino == inode


@pytest.mark.parametrize(
    "write",
    [Profile.save, Profile.export_chrome_trace, Profile.save_html],
    ids=["save", "export_chrome_trace", "save_html"],
)
def test_errors_name_the_users_path_not_the_temp_file(write, tmp_path):
    missing = tmp_path / "missing" / "x.out"
    with pytest.raises(FileNotFoundError) as raised:
        write(hand_profile(), missing)
    assert raised.value.filename == str(missing) and ".tmp" not in str(raised.value)
    directory = tmp_path / "a_directory"
    directory.mkdir()
    with pytest.raises(IsADirectoryError) as raised:
        write(hand_profile(), directory)
    assert raised.value.filename == str(directory) and listing(directory) == []
    assert listing(tmp_path) == ["a_directory"]


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ------------------------------------------------------------------------------------------------
# The command line


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "run.pplive"
    hand_profile().save(path)
    return path


def test_cli_checks_every_output_before_writing_any(saved, tmp_path, capsys):
    trace = tmp_path / "good.json"
    missing = tmp_path / "no" / "dir" / "x.html"
    assert main([str(saved), "--chrome", str(trace), "--html", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"pyprof-live: error: cannot write HTML report {missing}: directory {missing.parent} does not exist\n"
    )
    assert not trace.exists()
    under_a_file = saved / "x.html"
    assert main([str(saved), "--html", str(under_a_file), "--chrome", str(trace)]) == 2
    assert capsys.readouterr().err == (
        f"pyprof-live: error: cannot write HTML report {under_a_file}: {saved} is not a directory\n"
    )
    assert main([str(saved), "--html", str(tmp_path / "page.html"), "--chrome", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"pyprof-live: error: cannot write Chrome trace {tmp_path}: is a directory\n"
    assert listing(tmp_path) == ["run.pplive"]


def test_cli_removes_the_outputs_it_created_when_a_later_write_fails(saved, tmp_path, capsys, monkeypatch):
    def disk_full(profile, path):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(Profile, "save_html", disk_full)
    trace, page = tmp_path / "t.json", tmp_path / "r.html"
    assert main([str(saved), "--chrome", str(trace), "--html", str(page)]) == 2
    assert capsys.readouterr().err == f"pyprof-live: error: cannot write HTML report {page}: No space left on device\n"
    assert listing(tmp_path) == ["run.pplive"]
    trace.write_text("from an earlier run")  # replaced by this run's trace, atomically: kept
    assert main([str(saved), "--chrome", str(trace), "--html", str(page)]) == 2
    assert json.loads(trace.read_text())["traceEvents"]
    assert listing(tmp_path) == ["run.pplive", "t.json"]


class FullStream:
    def write(self, text):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def flush(self):
        pass


@pytest.mark.parametrize("options", [[], ["--csv"]])  # --csv streams its rows: another way to stdout
def test_cli_report_to_a_full_stdout_is_one_line_and_exit_code_2(saved, capsys, monkeypatch, options):
    monkeypatch.setattr(sys, "stdout", FullStream())
    assert main([str(saved), *options]) == 2
    assert capsys.readouterr().err == "pyprof-live: error: cannot write to stdout: No space left on device\n"


@pytest.mark.e2e
@pytest.mark.parametrize("options", [[], ["--csv"]])
def test_cli_stdout_failures_of_a_real_stream(saved, tmp_path, options):
    """A file at the size limit fails every write (File too large, as a full disk would): one line,
    exit code 2, nothing from the interpreter's exit. A closed pipe (``| head -1``) stays quiet, exit 0."""
    limit = 100
    full = tmp_path / "full.txt"
    full.write_bytes(b"x" * limit)
    with open(full, "ab") as stdout:
        done = run_pyprof_live(
            saved,
            *options,
            stdout=stdout,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
        )
    assert (done.returncode, done.stderr) == (2, "pyprof-live: error: cannot write to stdout: File too large\n")
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = run_pyprof_live(saved, *options, stdout=write_end)
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.e2e
@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_cli_report_cut_short_by_a_file_size_limit_is_an_error(saved, tmp_path, unbuffered):
    """Room for part of the report only: the first write is short. An unbuffered stdout
    (PYTHONUNBUFFERED, common in containers) used to drop the rest silently and exit 0."""
    limit = 200  # bytes; the report is longer
    out = tmp_path / "report.txt"
    with open(out, "wb") as stdout:
        done = run_pyprof_live(
            saved,
            stdout=stdout,
            env={**os.environ, "PYTHONUNBUFFERED": unbuffered},
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
        )
    assert (done.returncode, done.stderr) == (2, "pyprof-live: error: cannot write to stdout: File too large\n")
    assert out.stat().st_size == limit
