%%gradcheck
# Two losses combined by building a new tensor from them
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Linear(6, 3)
x = torch.randn(10, 6)
z = encoder(x)
recon = z.pow(2).mean()
sparsity = z.abs().mean()
losses = torch.stack([recon, sparsity])
total = losses.sum()
total.backward()
