"""CUDA API call names, as the live collector and the importers give them.

CUPTI names API callbacks with the CUDA version that added them (``cudaLaunchKernel_v7000``);
reports use the function's name. Live CUPTI records and nvprof exports carry only the callback id,
named through cupti-python's enums where it is installed.
"""

from __future__ import annotations

import re
from functools import lru_cache

_ADDED_IN_VERSION = re.compile(r"_v\d{4,}\Z")


def strip_added_version(callback_name: str) -> str:
    """``cudaLaunchKernel_v7000`` -> ``cudaLaunchKernel``; a driver name's own ``_v2`` stays."""
    return _ADDED_IN_VERSION.sub("", callback_name)


#: The callback id enums, by kind; cupti-python 13.3+ has them (13.2.0, the one pip installs beside
#: torch 2.15, has neither: its API calls are named ``runtime cbid N``).
CALLBACK_ID_ENUMS = {"runtime": "RuntimeApiTraceCbid", "driver": "DriverApiTraceCbid"}


@lru_cache(maxsize=4096)
def cupti_api_name(kind: str, cbid: int) -> str:
    """The name of a ``"runtime"`` or ``"driver"`` callback id; ``runtime cbid N`` for an id this
    cupti-python does not know, or when it has no callback id enums. Raises ImportError without cupti-python."""
    from cupti import cupti

    table = getattr(cupti, CALLBACK_ID_ENUMS[kind], None)
    try:
        return strip_added_version(table(cbid).name) if table is not None else f"{kind} cbid {cbid}"
    except ValueError:  # a cbid newer than this cupti-python
        return f"{kind} cbid {cbid}"


def cupti_names_api_calls() -> bool:
    """Does the installed cupti-python name API callback ids? False without it, or with 13.2.0."""
    try:
        from cupti import cupti
    except (ImportError, OSError):
        return False
    return all(hasattr(cupti, enum) for enum in CALLBACK_ID_ENUMS.values())
