# expect: rejected | changed after the call was reported finished
# expect-cpu: rejected | changed after the call was reported finished
# Work done once the judge's clock has stopped: custom_kernel returns zeros at once and, for a moment, replaces
# torch.equal, which the runner calls on the shared outputs after its `done` line (the check for work left on
# another stream); the stand-in writes the true factorisation into them and puts torch.equal back before anything
# looks. Pure Python, no name the scan reads, every shape timed at almost nothing: judged `ok` at 155.1 us on the CPU
# self-test, where the honest kernel scores about 1,130 (162.5 against 1,135.6 in a first version's pair), until the
# judge took its copy of the outputs at `done`, with the runner waiting (qrjudge/wire.py, `Channel.handover`). Now its
# late write is seen. (A first version factored twice, H from one call and tau from the other: on a GPU blocked_wy's
# rounding does not repeat, and the two disagreed on a near-rank test, notebook 2026-12-03/run107-run108.)
import torch
from base import custom_kernel as honest

_equal = torch.equal
_inputs = []


def _late(x, y):
    if x.dim() == 3:  # H first, then tau: one factorisation for both (a GPU's need not repeat its rounding)
        _inputs[:] = honest(_inputs[0])
        x.copy_(_inputs[0])
    else:
        x.copy_(_inputs[1])
        torch.equal = _equal
    if x.is_cuda:  # written before the runner replies: the judge checks a test's outputs once it has the reply
        torch.cuda.synchronize()
    return True


def custom_kernel(A):
    _inputs[:] = [A]
    torch.equal = _late
    b, n, _ = A.shape
    return torch.zeros_like(A), A.new_zeros(b, n)
