"""The optional C extensions; everything else is in pyproject.toml.

- pyprof_live/capture/_hook.c: the op hook's hot path (pure-Python twins: capture/recorder.py, capture/extern_ops.py);
- pyprof_live/_int_fields.c: the integer pass of the record checks (pure-Python twin: record_checks._ints_fit).

``optional=True``: where one cannot be built (no compiler, no Python headers, another Python than 3.11+),
the install goes on and pyprof_live uses the pure-Python code, which gives the same results. ``pip install -e .``
builds them in place (next to their .c files), where both the venv and a checkout on PYTHONPATH import them.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "pyprof_live.capture._hook",
            sources=["pyprof_live/capture/_hook.c"],
            optional=True,
        ),
        Extension("pyprof_live._int_fields", sources=["pyprof_live/_int_fields.c"], optional=True),
    ]
)
