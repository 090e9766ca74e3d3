# expect: rejected | forbidden
# expect-cpu: rejected | forbidden
import numpy as np
import torch


def custom_kernel(A):
    host = A.cpu().numpy()
    q, r = np.linalg.qr(host[0])
    return torch.geqrf(A)
