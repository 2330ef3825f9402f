%%gradcheck
import numpy as np
import torch

a = torch.ones(4, requires_grad=True)
b = torch.arange(4.0)
result = np.array((a * b + 1).detach())
