"""The one source of the version: pyproject.toml reads it, so does the HTML report."""

__version__ = "0.1.0"
