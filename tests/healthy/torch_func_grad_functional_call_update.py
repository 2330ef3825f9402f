"""Purely functional training with torch.func: gradients of `compute_loss(params, x, t)` (a functional_call of
the model) from torch.func.grad, and a new params dict built from them each step (plain SGD by hand).

source: https://pytorch.org/docs/stable/generated/torch.func.functional_call.html (the example: `def
compute_loss(params, x, t): y = functional_call(model, params, x); return nn.functional.mse_loss(y, t)`,
`grad_weights = grad(compute_loss)(dict(model.named_parameters()), x, t)`) with
https://pytorch.org/docs/stable/generated/torch.func.grad.html; the update loop added, 30 steps.
"""
# %%
import torch
import torch.nn as nn
from torch.func import functional_call, grad

torch.manual_seed(0)
x = torch.randn(4, 3)
t = torch.randn(4, 3)
model = nn.Linear(3, 3)


def compute_loss(params, x, t):
    y = functional_call(model, params, x)
    return nn.functional.mse_loss(y, t)


params = {k: v.detach() for k, v in model.named_parameters()}
lr = 0.1
# %%
for step in range(30):
    grad_weights = grad(compute_loss)(params, x, t)
    params = {k: params[k] - lr * grad_weights[k] for k in params}
