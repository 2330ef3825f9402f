"""Models and optimizers held in dicts keyed by name (a GAN-style or multi-task setup written generically).

source: https://github.com/eriklindernoren/PyTorch-GAN style loops with the nets kept in a dict, as in
https://github.com/NVlabs/stylegan2-ada-pytorch training_loop.py (`phases` each with its module and opt); 25 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
nets = {"a": nn.Linear(3, 1), "b": nn.Linear(3, 1)}
optims = {k: torch.optim.SGD(v.parameters(), lr=0.05) for k, v in nets.items()}
X = torch.randn(20, 3)
targets = {"a": X.sum(1, keepdim=True), "b": -X.sum(1, keepdim=True)}
# %%
for step in range(25):
    for name in nets:
        optims[name].zero_grad()
        loss = (nets[name](X) - targets[name]).pow(2).mean()
        loss.backward()
        optims[name].step()
