"""Ensemble members held as (model, optimizer) pairs in a list, each trained on its own bootstrap sample.

source: Lakshminarayanan et al., "Simple and Scalable Predictive Uncertainty Estimation using Deep Ensembles"
(bootstrap-free variant), written as pairs the way the d2l.ai and fast.ai forum examples hold them; 25 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
members = []
for k in range(3):
    net = nn.Linear(4, 2)
    members.append((net, torch.optim.SGD(net.parameters(), lr=0.1)))
X, Y = torch.randn(32, 4), torch.randint(0, 2, (32,))
criterion = nn.CrossEntropyLoss()
# %%
for step in range(25):
    for net, opt in members:
        idx = torch.randint(0, 32, (32,))
        opt.zero_grad()
        loss = criterion(net(X[idx]), Y[idx])
        loss.backward()
        opt.step()
