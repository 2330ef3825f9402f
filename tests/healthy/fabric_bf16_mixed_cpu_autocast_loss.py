"""Fabric with precision="bf16-mixed" on the CPU: fabric.setup wraps the model's forward in
torch.autocast(bfloat16) (no grad scaler), the loss is computed outside forward inside `fabric.autocast()`,
fabric.backward(loss) replaces loss.backward(), and the weights and optimizer state stay float32.

source: https://lightning.ai/docs/fabric/stable/fundamentals/precision.html ("BFloat16 Mixed Precision":
`fabric = Fabric(precision="bf16-mixed")`, "It is also possible to use BFloat16 mixed precision on the CPU";
"Control where precision gets applied": `model, optimizer = fabric.setup(model, optimizer)`, `output =
model.forward(input)`, `with fabric.autocast(): loss = loss_function(output, target)`), in the loop of the
Fabric "Convert to Fabric" page (fabric.setup_dataloaders, optimizer.zero_grad, fabric.backward, step); a
small conv classifier on 8x8 synthetic images, accelerator="cpu", 3 epochs of 8 batches.
"""
# %%
import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
fabric = L.Fabric(accelerator="cpu", devices=1, precision="bf16-mixed")
fabric.launch()

model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(16, 4))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
model, optimizer = fabric.setup(model, optimizer)

y = torch.randint(0, 4, (128,))
x = torch.randn(128, 3, 8, 8) * 0.5
x[torch.arange(128), y % 3] += (y.view(-1, 1, 1).float() - 1.5)
dataloader = fabric.setup_dataloaders(DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True))
loss_function = F.cross_entropy
# %%
model.train()
for epoch in range(3):
    for input, target in dataloader:
        optimizer.zero_grad()
        output = model(input)
        with fabric.autocast():
            loss = loss_function(output, target)
        fabric.backward(loss)
        optimizer.step()
