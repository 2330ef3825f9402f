"""A model run over chunks of a batch, the outputs appended to a list and concatenated into one loss.

source: https://pytorch.org/docs/stable/notes/amp_examples.html style micro-batching, as in
https://github.com/karpathy/minGPT (chunks of a sequence decoded step by step), 30 steps on random data.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 10), nn.Tanh(), nn.Linear(10, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.MSELoss()
# %%
for step in range(30):
    x, target = torch.randn(16, 5), torch.randn(16, 1)
    outs = []
    for chunk in x.split(4):
        outs.append(model(chunk))
    loss = loss_fn(torch.cat(outs), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
