# expect: ok |
# Work on a side stream starts as soon as it is launched, even while the current stream is still flushing L2
# before the timed region. A timer that records its start event behind the flush without waiting for it (as a
# loop of calls in one process may) then times such work from the flush's end, when much of it is done. The
# judge's runner synchronises the device after the flush, so this kernel times as the one it wraps.
import torch
from base import custom_kernel as honest

_SIDE = None


def custom_kernel(A):
    global _SIDE
    if _SIDE is None:
        _SIDE = torch.cuda.Stream()
    with torch.cuda.stream(_SIDE):  # no wait on the current stream: free to start at once
        h, tau = honest(A)
    torch.cuda.current_stream().wait_stream(_SIDE)  # joined: nothing is left running after the return
    return h, tau
