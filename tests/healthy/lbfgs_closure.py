"""LBFGS, which re-evaluates the model several times per step, driven by a closure that zeroes the gradients,
computes the loss, calls backward() and returns the loss.

source: https://pytorch.org/docs/stable/optim.html#optimizer-step-closure (the closure example) as used in
https://github.com/pytorch/examples/blob/main/time_sequence_prediction/train.py (`optimizer =
optim.LBFGS(seq.parameters(), lr=0.8)`); a small regression MLP, 20 LBFGS steps.
"""
# %%
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
loss_fn = nn.MSELoss()
input = torch.randn(32, 3)
target = torch.sin(input.sum(dim=1, keepdim=True))
optimizer = optim.LBFGS(model.parameters(), lr=0.8, max_iter=4)
# %%
for i in range(20):
    def closure():
        optimizer.zero_grad()
        output = model(input)
        loss = loss_fn(output, target)
        loss.backward()
        return loss
    optimizer.step(closure)
print(loss_fn(model(input), target).item())
