"""The optional C op hook (pyprof_live/capture/_hook.c); everything else is in pyproject.toml.

``optional=True``: where it cannot be built (no compiler, no Python headers, another Python than 3.11+),
the install goes on and pyprof_live uses its pure-Python hook (capture/recorder.py). ``pip install -e .``
builds it in place (next to _hook.c), where both the venv and a checkout on PYTHONPATH import it.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "pyprof_live.capture._hook",
            sources=["pyprof_live/capture/_hook.c"],
            optional=True,
        )
    ]
)
