%%gradcheck
# Softmax regression by hand
import torch
import torch.nn.functional as F

X = torch.randn(4, 2)
y = torch.tensor([0., 2., 1., 1.], dtype=torch.long)
W = torch.zeros(2, 3, requires_grad=True)
b = torch.zeros(3, requires_grad=True)
for step in range(20):
    loss = F.cross_entropy(X @ W + b, y)
    loss.backward()
    with torch.no_grad():
        W -= 0.5 * W.grad
        b -= 0.5 * b.grad
        W.grad.zero_()
        b.grad.zero_()
