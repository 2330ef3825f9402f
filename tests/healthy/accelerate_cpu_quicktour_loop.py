"""The accelerate quicktour loop: accelerator.prepare(model, optimizer, dataloader, scheduler) and
accelerator.backward(loss) in place of loss.backward(), here with Accelerator(cpu=True).

source: https://huggingface.co/docs/accelerate/quicktour (`model, optimizer, training_dataloader, scheduler =
accelerator.prepare(...)`, the loop: `optimizer.zero_grad()`, `outputs = model(inputs)`, `loss =
loss_function(outputs, targets)`, `accelerator.backward(loss)`, `optimizer.step()`, `scheduler.step()`);
an MLP classifier on synthetic data, 3 epochs of 8 batches.
"""
# %%
import torch
from accelerate import Accelerator
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
accelerator = Accelerator(cpu=True)
device = accelerator.device
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
X = torch.randn(64, 20)
training_dataloader = DataLoader(TensorDataset(X, X[:, :5].argmax(1)), batch_size=8, shuffle=True)
scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=1.0, end_factor=0.1, total_iters=24)
loss_function = nn.CrossEntropyLoss()
model, optimizer, training_dataloader, scheduler = accelerator.prepare(
    model, optimizer, training_dataloader, scheduler
)
# %%
for epoch in range(3):
    for batch in training_dataloader:
        optimizer.zero_grad()
        inputs, targets = batch
        outputs = model(inputs)
        loss = loss_function(outputs, targets)
        accelerator.backward(loss)
        optimizer.step()
        scheduler.step()
