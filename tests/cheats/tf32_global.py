# expect: rejected | allow_tf32
# expect-cpu: rejected | allow_tf32
import torch
from base import custom_kernel as honest

torch.backends.cuda.matmul.allow_tf32 = True  # faster GEMMs... and a checker that looks the other way


def custom_kernel(A):
    return honest(A)
