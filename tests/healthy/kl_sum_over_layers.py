"""A Bayes-by-backprop style KL term summed over the layers, then added to the data loss.

source: https://github.com/piEsposito/blitz-bayesian-deep-learning (the `nn_kl_divergence` sum over
BayesianModule layers), written out with plain Gaussian weight posteriors, tiny synthetic regression, 30 steps.
"""
# %%
import torch
import torch.nn as nn
import torch.nn.functional as F


class BayesLinear(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.mu = nn.Parameter(torch.randn(n_out, n_in) * 0.1)
        self.rho = nn.Parameter(torch.full((n_out, n_in), -3.0))

    def forward(self, x):
        sigma = F.softplus(self.rho)
        w = self.mu + sigma * torch.randn_like(sigma)
        self.kl = (sigma.pow(2) + self.mu.pow(2) - 1 - 2 * sigma.log()).sum() / 2
        return x @ w.t()


torch.manual_seed(0)
layers = nn.ModuleList([BayesLinear(4, 8), BayesLinear(8, 1)])
opt = torch.optim.Adam(layers.parameters(), lr=1e-2)
X, Y = torch.randn(32, 4), torch.randn(32, 1)
# %%
for epoch in range(30):
    opt.zero_grad()
    h = torch.relu(layers[0](X))
    pred = layers[1](h)
    kl = 0
    for layer in layers:
        kl = kl + layer.kl
    loss = F.mse_loss(pred, Y) + kl / len(X)
    loss.backward()
    opt.step()
