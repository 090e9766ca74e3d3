"""A hybrid merge sort in pure Python: the CPU example's "kernel".

Its speed depends on the tunable parameters below (see `@tune` in docs/ARCHITECTURE.md) and on edits.
The evaluator (../../check.py) checks `sort_list` against the contract and times it.
"""

# Tunables are a blank line apart, so that crossovers of children that changed different ones merge cleanly.
CUTOFF = 2  # @tune CUTOFF: 1 2 3 4 6 8 12 16 24 32 48 64

BINARY_INSERT = 0  # @tune BINARY_INSERT: 0 1

SKIP_ORDERED = 0  # @tune SKIP_ORDERED: 0 1


def _insertion_sort(a, lo, hi):
    for i in range(lo + 1, hi):
        x = a[i]
        if BINARY_INSERT:
            left, right = lo, i
            while left < right:
                mid = (left + right) // 2
                if a[mid] <= x:
                    left = mid + 1
                else:
                    right = mid
            a[left + 1:i + 1] = a[left:i]
            a[left] = x
        else:
            j = i - 1
            while j >= lo and a[j] > x:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = x


def _merge(a, lo, mid, hi, buf):
    if SKIP_ORDERED and a[mid - 1] <= a[mid]:
        return
    buf[lo:hi] = a[lo:hi]
    i, j, k = lo, mid, lo
    while i < mid and j < hi:
        if buf[j] < buf[i]:
            a[k] = buf[j]
            j += 1
        else:
            a[k] = buf[i]
            i += 1
        k += 1
    while i < mid:
        a[k] = buf[i]
        i += 1
        k += 1
    while j < hi:
        a[k] = buf[j]
        j += 1
        k += 1


def _sort(a, lo, hi, buf):
    if hi - lo <= CUTOFF:
        _insertion_sort(a, lo, hi)
        return
    mid = (lo + hi) // 2
    _sort(a, lo, mid, buf)
    _sort(a, mid, hi, buf)
    _merge(a, lo, mid, hi, buf)


def sort_list(values):
    """Return a new list with `values` in ascending order (stable). `values` must not change."""
    a = list(values)
    _sort(a, 0, len(a), [None] * len(a))
    return a
