# expect: rejected | getattr used as a value|forbidden
# expect-cpu: rejected | getattr used as a value|forbidden
# torch.geqrf fetched from the C-level function table by a chain of getattr calls folded by functools.reduce:
# no name of the library appears in the code. Refused by the scan (getattr passed around as a value) and, were
# the scan passed, by the dispatcher (tests/test_guard_cpu.py runs the same call past the scan).
import functools

import torch

PATH = ["_C", "_VariableFunctions", "geq" + "rf"]


def custom_kernel(A):
    h, tau = functools.reduce(getattr, PATH, torch)(A)
    return h.contiguous(), tau.contiguous()
