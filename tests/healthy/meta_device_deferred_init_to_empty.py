"""Deferred initialisation on the meta device: the model is built under `with torch.device("meta")` (no memory,
no init), materialised with `model.to_empty(device="cpu")`, its parameters re-initialised with
reset_parameters(), then trained.

source: https://pytorch.org/docs/stable/meta.html (Idioms for working with meta tensors: "construct a module on
the meta device ... `with torch.device('meta'): model = ...`", then `to_empty` "and then explicitly reinitialize
the parameters"); an MLP with LayerNorm, 25 Adam steps.
"""
# %%
import torch
from torch import nn

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self, d_in=16, d_hidden=64, d_out=4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.norm = nn.LayerNorm(d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(torch.relu(self.norm(self.fc1(x))))


with torch.device("meta"):
    model = MLP()
model.to_empty(device="cpu")
for module in model.modules():
    if hasattr(module, "reset_parameters"):
        module.reset_parameters()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
X = torch.randn(25, 16, 16)
Y = torch.randint(0, 4, (25, 16))
# %%
for x, y in zip(X, Y):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
