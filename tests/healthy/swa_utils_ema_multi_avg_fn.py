"""An exponential moving average of a model with torch.optim.swa_utils: AveragedModel(model,
multi_avg_fn=get_ema_multi_avg_fn(0.999), use_buffers=True), updated with update_parameters after every
optimizer step.

source: https://pytorch.org/docs/stable/optim.html#weight-averaging-swa-and-ema (EMA: `ema_model =
torch.optim.swa_utils.AveragedModel(model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.999))`,
"`ema_model.update_parameters(model)` after optimizer.step()", use_buffers=True for BatchNorm buffers);
a small BatchNorm MLP, 30 steps, the EMA model evaluated at the end.
"""
# %%
import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 1))
ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999), use_buffers=True)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.MSELoss()
loader = [(x, x.pow(2).sum(1, keepdim=True)) for x in torch.randn(30, 16, 4)]
# %%
for input, target in loader:
    optimizer.zero_grad()
    loss_fn(model(input), target).backward()
    optimizer.step()
    ema_model.update_parameters(model)

ema_model.eval()
with torch.no_grad():
    ema_loss = loss_fn(ema_model(loader[0][0]), loader[0][1])
