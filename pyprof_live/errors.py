"""Typed errors: every failure a user can cause has its own class and a one-line message."""

from .safe_text import printable


class PyprofLiveError(Exception):
    """Base class of every error pyprof_live raises on purpose."""


class ProfileFormatError(PyprofLiveError):
    """A file is not a profile we can read: names the file and what is wrong with it."""

    def __init__(self, path, problem: str):
        self.path = str(path)
        self.problem = problem
        # One line whatever the file holds or is called: SQLite quotes damaged SQL, names hold newlines.
        super().__init__(f"{printable(self.path)}: {printable(problem)}")


class ProfileVersionError(ProfileFormatError):
    """A saved profile was written by a newer pyprof_live than this one."""


class CaptureError(PyprofLiveError):
    """Live capture cannot start or was misused (nested profiles, profile already stopped...)."""


class ColumnError(PyprofLiveError, ValueError):
    """A report asked for a column or sort key that does not exist; lists the valid ones."""


class GpuUnavailableError(PyprofLiveError):
    """gpu="cupti" was asked for but CUPTI cannot be used here; says why and what to do."""


class UnsupportedTorchError(CaptureError):
    """Live capture cannot work with this torch (older than the supported range, or missing an internal it
    needs); names the supported range."""
