%%gradcheck
# Small random init: the scaling makes `W` the result of an operation, not a leaf
import torch

torch.manual_seed(0)
W = torch.randn(3, 1, requires_grad=True) * 0.01
data = [(torch.randn(8, 3), torch.randn(8, 1)) for _ in range(3)]
for xb, yb in data:
    loss = ((xb @ W - yb) ** 2).mean()
    loss.backward()
    print(W.grad)
