"""Stochastic Weight Averaging: AveragedModel, SWALR after swa_start, a CosineAnnealingLR before it,
update_bn at the end.

source: https://pytorch.org/docs/stable/optim.html#putting-it-all-together (the SWA example: `swa_model =
AveragedModel(model)`, `scheduler = CosineAnnealingLR(optimizer, T_max=100)`, `swa_scheduler =
SWALR(optimizer, swa_lr=0.05)`, `swa_start = 5`, update_bn(loader, swa_model)); 8 epochs of 4 batches.
"""
# %%
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import CosineAnnealingLR
from torch.optim.swa_utils import SWALR, AveragedModel

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))
loss_fn = nn.MSELoss()
loader = [(torch.randn(8, 5), torch.randn(8, 1)) for _ in range(4)]
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
swa_model = AveragedModel(model)
scheduler = CosineAnnealingLR(optimizer, T_max=100)
swa_start = 5
swa_scheduler = SWALR(optimizer, swa_lr=0.05)
# %%
for epoch in range(8):
    for input, target in loader:
        optimizer.zero_grad()
        loss_fn(model(input), target).backward()
        optimizer.step()
    if epoch > swa_start:
        swa_model.update_parameters(model)
        swa_scheduler.step()
    else:
        scheduler.step()

# Update bn statistics for the swa_model at the end
torch.optim.swa_utils.update_bn(loader, swa_model)
