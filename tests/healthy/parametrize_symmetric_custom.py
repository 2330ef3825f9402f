"""A custom parametrization with torch.nn.utils.parametrize: a Symmetric module registered on a Linear weight
(the optimizer updates `parametrizations.weight.original`), inside a small model trained with SGD.

source: https://pytorch.org/tutorials/intermediate/parametrizations.html (`class Symmetric(nn.Module): def
forward(self, X): return X.triu() + X.triu(1).transpose(-1, -2)`, `parametrize.register_parametrization(layer,
"weight", Symmetric())`); the parametrized square layer sits between two plain ones, 25 steps.
"""
# %%
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize

torch.manual_seed(0)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
parametrize.register_parametrization(model[2], "weight", Symmetric())
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
X = torch.randn(64, 6)
y = torch.sin(X[:, :1]) + X[:, 1:2] ** 2
# %%
for step in range(25):
    idx = torch.randint(0, 64, (16,))
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(X[idx]), y[idx])
    loss.backward()
    optimizer.step()
