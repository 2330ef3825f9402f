"""An SN-GAN-style discriminator with torch.nn.utils.parametrizations.spectral_norm on every layer, trained
with the hinge loss against a small generator (fake.detach() for D, two Adam optimizers, betas=(0.0, 0.9)).

source: https://pytorch.org/docs/stable/generated/torch.nn.utils.parametrizations.spectral_norm.html and
https://github.com/christiancosgrove/pytorch-spectral-normalization-gan/blob/master/main.py (the hinge-loss
train step: `disc_loss = nn.ReLU()(1.0 - discriminator(data)).mean() + nn.ReLU()(1.0 +
discriminator(generator(z))).mean()`, `gen_loss = -discriminator(generator(z)).mean()`); MLPs on 2-d points,
30 iterations.
"""
# %%
import torch
import torch.nn as nn
import torch.optim as optim
from torch.nn.utils.parametrizations import spectral_norm

torch.manual_seed(0)
Z_dim = 4
discriminator = nn.Sequential(spectral_norm(nn.Linear(2, 32)), nn.LeakyReLU(0.1),
                              spectral_norm(nn.Linear(32, 32)), nn.LeakyReLU(0.1),
                              spectral_norm(nn.Linear(32, 1)))
generator = nn.Sequential(nn.Linear(Z_dim, 32), nn.ReLU(), nn.Linear(32, 2))
optim_disc = optim.Adam(filter(lambda p: p.requires_grad, discriminator.parameters()), lr=2e-4, betas=(0.0, 0.9))
optim_gen = optim.Adam(generator.parameters(), lr=2e-4, betas=(0.0, 0.9))
real = torch.randn(64, 2) * 0.3 + torch.tensor([1.0, -1.0])
# %%
for batch_idx in range(30):
    data = real[(batch_idx * 16) % 64:(batch_idx * 16) % 64 + 16]
    z = torch.randn(data.size(0), Z_dim)

    # update discriminator
    optim_disc.zero_grad()
    optim_gen.zero_grad()
    disc_loss = nn.ReLU()(1.0 - discriminator(data)).mean() + nn.ReLU()(1.0 + discriminator(generator(z).detach())).mean()
    disc_loss.backward()
    optim_disc.step()

    z = torch.randn(data.size(0), Z_dim)
    # update generator
    optim_disc.zero_grad()
    optim_gen.zero_grad()
    gen_loss = -discriminator(generator(z)).mean()
    gen_loss.backward()
    optim_gen.step()
print(disc_loss.item())
