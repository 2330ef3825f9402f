"""Gradient accumulation the accelerate way: Accelerator(gradient_accumulation_steps=2) and the whole step
inside `with accelerator.accumulate(model):` (optimizer.step / zero_grad are no-ops until gradients sync).

source: https://huggingface.co/docs/accelerate/usage_guides/gradient_accumulation (the final loop:
`accelerator = Accelerator(gradient_accumulation_steps=2)`, `with accelerator.accumulate(model):` around
forward, `accelerator.backward(loss)`, `optimizer.step()`, `scheduler.step()`, `optimizer.zero_grad()`);
CPU, an MLP regressor, 40 batches (20 optimizer steps).
"""
# %%
import torch
from accelerate import Accelerator
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
accelerator = Accelerator(cpu=True, gradient_accumulation_steps=2)
model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=20)
X = torch.randn(320, 6)
training_dataloader = DataLoader(TensorDataset(X, X @ torch.randn(6, 1)), batch_size=8)
loss_function = nn.MSELoss()
model, optimizer, training_dataloader, scheduler = accelerator.prepare(
    model, optimizer, training_dataloader, scheduler
)
# %%
for batch in training_dataloader:
    with accelerator.accumulate(model):
        inputs, targets = batch
        outputs = model(inputs)
        loss = loss_function(outputs, targets)
        accelerator.backward(loss)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
