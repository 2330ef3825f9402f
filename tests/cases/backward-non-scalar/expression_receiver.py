%%gradcheck
# backward() called directly on an expression
import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
x, y = torch.randn(10, 3), torch.randn(10)
(x @ w - y).abs().backward()
print(w.grad)
