"""Gradients zeroed in place by hand (`p.grad.zero_()` / `p.grad.detach_()`) after each step.

source: https://pytorch.org/tutorials/beginner/pytorch_with_examples.html ("PyTorch: Tensors and autograd":
`w1.grad = None` ... and the older `w1.grad.zero_()` form), with an optimizer stepping; 30 steps.
"""
# %%
import torch

torch.manual_seed(0)
w = torch.randn(5, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
opt = torch.optim.SGD([w, b], lr=0.01)
X = torch.randn(50, 5)
Y = X @ torch.ones(5, 1)
# %%
for t in range(30):
    loss = ((X @ w + b) - Y).pow(2).mean()
    loss.backward()
    opt.step()
    with torch.no_grad():
        w.grad.zero_()
        b.grad.zero_()
