%%gradcheck
# Plain tensor code: a range of points to differentiate at
import torch

t = torch.arange(5, requires_grad=True)
f = (t ** 2).sum()
f.backward()
print(t.grad)
