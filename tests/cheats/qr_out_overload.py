# expect: rejected | aten::linalg_qr.out
# expect-cpu: rejected | aten::linalg_qr.out
# A QR through the `out=` overload of torch.linalg.qr, on the host: an overload is an operator of its own at the
# dispatcher, and the guard once refused only each family operator's default one (every `out=` call passed).
import torch
from base import custom_kernel as honest


def custom_kernel(A):
    one = A[:1].cpu()
    torch.linalg.qr(one, out=(torch.empty_like(one), torch.empty_like(one)))
    return honest(A)
