# expect: rejected | another stream
import torch
from base import custom_kernel as honest

_SIDE = None


def custom_kernel(A):
    global _SIDE
    if _SIDE is None:
        _SIDE = torch.cuda.Stream()
    H = torch.zeros_like(A)
    tau = torch.zeros(A.shape[0], A.shape[1], device=A.device)
    _SIDE.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(_SIDE):
        torch.cuda._sleep(50_000_000)  # about 25 ms of GPU time that the current stream never waits for
        h, t = honest(A)
        H.copy_(h)
        tau.copy_(t)
    return H, tau
