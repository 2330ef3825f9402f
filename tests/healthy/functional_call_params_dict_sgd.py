"""Training the parameters of a module kept outside it, as a dict: torch.func.functional_call(model, params,
(x,)) for the forward, loss.backward() into the dict's leaf tensors, a hand-written SGD update under
torch.no_grad(), grads cleared by setting them to None.

source: https://pytorch.org/docs/stable/generated/torch.func.functional_call.html (`functional_call(model,
params, x)` with "a dictionary of parameters ... used in the module call instead of the module's own") in the
style of the hand-written update of
https://pytorch.org/tutorials/beginner/examples_nn/polynomial_nn.html (`with torch.no_grad(): for param in
...: param -= learning_rate * param.grad`); a small MLP, 30 steps.
"""
# %%
import torch
from torch import nn
from torch.func import functional_call

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
params = {name: p.detach().clone().requires_grad_(True) for name, p in model.named_parameters()}
x = torch.linspace(-1, 1, 64).unsqueeze(1).repeat(1, 3) * torch.tensor([1.0, 0.5, -0.3])
y = torch.sin(3 * x[:, :1])
learning_rate = 0.1
# %%
for step in range(30):
    y_pred = functional_call(model, params, (x,))
    loss = nn.functional.mse_loss(y_pred, y)
    loss.backward()
    with torch.no_grad():
        for name, param in params.items():
            param -= learning_rate * param.grad
            param.grad = None
