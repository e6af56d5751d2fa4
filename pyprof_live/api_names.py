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


@lru_cache(maxsize=4096)
def cupti_api_name(kind: str, cbid: int) -> str:
    """The name of a ``"runtime"`` or ``"driver"`` callback id; ``runtime cbid N`` for an id this
    cupti-python does not know. Raises ImportError without cupti-python."""
    from cupti import cupti

    table = cupti.RuntimeApiTraceCbid if kind == "runtime" else cupti.DriverApiTraceCbid
    try:
        return strip_added_version(table(cbid).name)
    except ValueError:  # a cbid newer than this cupti-python
        return f"{kind} cbid {cbid}"
