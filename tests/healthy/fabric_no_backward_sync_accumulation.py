"""Gradient accumulation with Lightning Fabric: `is_accumulating = iteration % 4 != 0`, the forward and
fabric.backward inside `fabric.no_backward_sync(model, enabled=is_accumulating)`, step and zero_grad when not
accumulating.

source: https://lightning.ai/docs/fabric/stable/advanced/gradient_accumulation.html (the loop with
`with fabric.no_backward_sync(model, enabled=is_accumulating):`, ".backward() accumulates when .zero_grad()
wasn't called", `if not is_accumulating: optimizer.step(); optimizer.zero_grad()`); every 4 batches instead
of 8, an MLP regressor, Fabric on CPU, 81 batches (21 optimizer steps).
"""
# %%
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
fabric = L.Fabric(accelerator="cpu", devices=1)
model = nn.Sequential(nn.Linear(5, 32), nn.GELU(), nn.Linear(32, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
model, optimizer = fabric.setup(model, optimizer)
X = torch.randn(324, 5)
dataloader = fabric.setup_dataloaders(DataLoader(TensorDataset(X, X.pow(2).sum(1, keepdim=True)), batch_size=4))
# %%
for iteration, batch in enumerate(dataloader):
    input, target = batch
    # Accumulate gradient 4 batches at a time
    is_accumulating = iteration % 4 != 0

    with fabric.no_backward_sync(model, enabled=is_accumulating):
        output = model(input)
        loss = torch.nn.functional.mse_loss(output, target)
        # .backward() accumulates when .zero_grad() wasn't called
        fabric.backward(loss)

    if not is_accumulating:
        # Step the optimizer after the accumulation phase is over
        optimizer.step()
        optimizer.zero_grad()
