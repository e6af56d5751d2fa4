"""Analysis over correlated records: GPU peak figures, rooflines, step time breakdown, recommendations."""

from .peaks import PEAKS, GpuPeak, find_peak

__all__ = ["PEAKS", "GpuPeak", "find_peak"]
