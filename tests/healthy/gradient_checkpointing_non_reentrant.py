"""Activation checkpointing: each block's forward run through torch.utils.checkpoint.checkpoint(...,
use_reentrant=False), so its activations are recomputed in the backward.

source: https://pytorch.org/docs/stable/checkpoint.html (checkpoint(function, *args, use_reentrant=False)),
in the form used by many model codebases (`x = checkpoint(block, x, use_reentrant=False)` in forward when
training); 4 residual MLP blocks, 30 steps.
"""
# %%
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        return x + self.ff(self.norm(x))


class Net(nn.Module):
    def __init__(self, d=16, depth=4, n_out=3):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(depth))
        self.head = nn.Linear(d, n_out)
        self.gradient_checkpointing = True

    def forward(self, x):
        for block in self.blocks:
            if self.gradient_checkpointing and self.training:
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return self.head(x)


model = Net()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
X, Y = torch.randn(40, 16), torch.randint(0, 3, (40,))
# %%
model.train()
for step in range(30):
    i = (step * 8) % 40
    loss = nn.functional.cross_entropy(model(X[i:i + 8]), Y[i:i + 8])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
