"""A PyTorch loop converted to Lightning Fabric: fabric.setup(model, optimizer), fabric.setup_dataloaders,
fabric.backward(loss) instead of loss.backward(), an LR scheduler stepped each epoch.

source: https://lightning.ai/docs/fabric/stable/ (the "Convert to Fabric" example: `fabric = L.Fabric()`,
`fabric.launch()`, `model, optimizer = fabric.setup(model, optimizer)`, `dataloader =
fabric.setup_dataloaders(dataloader)`, the loop with `optimizer.zero_grad()`, `loss =
torch.nn.functional.nll_loss(output, target.view(-1))`, `fabric.backward(loss)`, `optimizer.step()`,
`lr_scheduler.step()`); a small log-softmax classifier, Fabric on CPU, 5 epochs of 5 batches.
"""
# %%
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
fabric = L.Fabric(accelerator="cpu", devices=1)
fabric.launch()

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4), nn.LogSoftmax(dim=1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
X = torch.randn(40, 10)
dataset = TensorDataset(X, X[:, :4].argmax(1, keepdim=True))
dataloader = DataLoader(dataset, batch_size=8, shuffle=True)

model, optimizer = fabric.setup(model, optimizer)
dataloader = fabric.setup_dataloaders(dataloader)
num_epochs = 5
# %%
model.train()
for epoch in range(num_epochs):
    for batch in dataloader:
        input, target = batch
        optimizer.zero_grad()
        output = model(input)
        loss = torch.nn.functional.nll_loss(output, target.view(-1))
        fabric.backward(loss)
        optimizer.step()
    lr_scheduler.step()
