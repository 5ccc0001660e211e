"""Back a freshly loaded model's weights with 2 MiB transparent huge pages (Linux).

Why: a CPU decode step streams every weight once (~106 MB for the int4 GPT). With 4 KiB
pages that is ~26,000 pages per step, each a TLB miss and a boundary where the hardware
prefetcher stops; on machines whose transparent-huge-page mode is ``madvise`` (the common
default) ONNX Runtime's weight buffers never get huge pages on their own. Measured on the
2-core VM of BENCHMARKS.md (section "CPU: where the int4 decode step's time goes"): ~1 % per
int4 step (the kernel is not TLB-bound there), for ~0.4 s more at load; other machines with
smaller TLBs or larger models gain more. Only the GPT stack's session is advised (the
audio graphs are small and may be created while streaming).

How: :func:`mappings` snapshots the process's writable anonymous mappings (including the
``[heap]``) before a session is created; :func:`advise_new` then asks the kernel, for every
mapping that appeared or grew since, to use huge pages (``MADV_HUGEPAGE``) and to collapse
the pages already there now (``MADV_COLLAPSE``, Linux >= 6.1). Both are hints: on other
systems, with THP off, or when the kernel refuses, nothing changes and nothing fails.
Memory contents are untouched; only the page size behind them changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

__all__ = ["advise_new", "huge_bytes", "mappings"]

_MADV_HUGEPAGE = 14
_MADV_COLLAPSE = 25
_HUGE = 2 << 20
#: Mappings smaller than this are left alone (small buffers gain nothing).
MIN_BYTES = 4 << 20

Region = tuple[int, int]


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.madvise.restype = ctypes.c_int
    return libc


def mappings() -> set[Region]:
    """Writable private anonymous mappings (and the heap) of this process, as (start, end)."""
    out: set[Region] = set()
    try:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) < 5 or not parts[1].startswith("rw") or parts[1][3] != "p":
                    continue
                path = parts[5] if len(parts) > 5 else ""
                if path not in ("", "[heap]"):
                    continue
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.add((lo, hi))
    except OSError:
        pass
    return out


def advise_new(before: set[Region], min_bytes: int = MIN_BYTES) -> int:
    """Advise huge pages for the mappings not in ``before`` (new or resized) of at least
    ``min_bytes``; return how many bytes the kernel collapsed into huge pages now (0 where
    unsupported)."""
    if os.environ.get("MIXVOX_NO_HUGEPAGES"):
        return 0
    libc = _libc()
    if libc is None:
        return 0
    collapsed = 0
    for lo, hi in sorted(mappings() - before):
        a = (lo + _HUGE - 1) & ~(_HUGE - 1)
        b = hi & ~(_HUGE - 1)
        if b - a < max(min_bytes, _HUGE):
            continue
        if libc.madvise(a, b - a, _MADV_HUGEPAGE) != 0:
            continue  # THP off or not supported: nothing more to do
        if libc.madvise(a, b - a, _MADV_COLLAPSE) == 0:
            collapsed += b - a
    return collapsed


def huge_bytes() -> int:
    """Bytes of this process's anonymous memory in huge pages (``AnonHugePages``), or 0."""
    try:
        with open("/proc/self/smaps_rollup", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("AnonHugePages:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0
