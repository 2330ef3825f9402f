%%gradcheck
# The leaf is rebound before any backward() and not from its gradient: it may be meant as part of the
# computation, so no fix is proposed
import torch

w = torch.ones(3, requires_grad=True)
w = w * 2
w.sum().backward()
print(w.grad)
