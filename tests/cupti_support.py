"""cupti-python for the GPU tests: its real record classes, or a skip of the whole module saying what is missing.

The tests build CUPTI's records with cupti-python's own classes (ActivityKernel13...) and name API calls
with its callback id enums. cupti-python 13.2.0, the one pip installs beside torch 2.15 (whose pinned
libcupti 13.2 the newer releases do not accept), has neither; pyprof_live copes with it (API calls are
named ``runtime cbid N``), but these tests cannot build their records with it.
"""

import importlib.metadata

import pytest

#: What the tests construct or name: the kernel record class and both callback id enums (cupti-python 13.3+).
NEEDED = ("ActivityKernel13", "RuntimeApiTraceCbid", "DriverApiTraceCbid")


def cupti_or_skip():
    """``cupti.cupti``, or a module-level skip when cupti-python is absent or lacks :data:`NEEDED`."""
    try:
        from cupti import cupti
    except (ImportError, OSError) as exc:
        pytest.skip(f"cupti-python is not installed or cannot load ({exc})", allow_module_level=True)
    missing = [name for name in NEEDED if not hasattr(cupti, name)]
    if missing:
        version = importlib.metadata.version("cupti-python")
        pytest.skip(f"cupti-python {version} lacks {', '.join(missing)} (added in 13.3)", allow_module_level=True)
    return cupti
