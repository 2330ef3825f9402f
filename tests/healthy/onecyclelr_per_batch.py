"""OneCycleLR stepped after every batch, as its documentation shows (SGD with momentum, cycled momentum).

source: https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.OneCycleLR.html (the example:
`scheduler = OneCycleLR(optimizer, max_lr=0.01, steps_per_epoch=len(data_loader), epochs=10)`, then
`optimizer.step(); scheduler.step()` per batch); 4 epochs of 8 random batches.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
loss_fn = nn.MSELoss()
data_loader = [(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(8)]
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.01, steps_per_epoch=len(data_loader), epochs=4)
# %%
for epoch in range(4):
    for input, target in data_loader:
        optimizer.zero_grad()
        loss = loss_fn(model(input), target)
        loss.backward()
        optimizer.step()
        scheduler.step()
