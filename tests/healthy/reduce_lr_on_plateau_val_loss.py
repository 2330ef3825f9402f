"""ReduceLROnPlateau stepped on the validation loss after each epoch's training pass.

source: https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.ReduceLROnPlateau.html (the example:
`scheduler = ReduceLROnPlateau(optimizer, 'min')`, `train(...)`, `val_loss = validate(...)`,
`scheduler.step(val_loss)`); train/validate written out, 6 epochs of 5 batches, patience=1.
"""
# %%
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import ReduceLROnPlateau

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = ReduceLROnPlateau(optimizer, 'min', patience=1)
train_batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(5)]
val_x, val_y = torch.randn(16, 4), torch.randn(16, 1)


def train():
    model.train()
    for x, y in train_batches:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()


def validate():
    model.eval()
    with torch.no_grad():
        return criterion(model(val_x), val_y).item()
# %%
for epoch in range(6):
    train()
    val_loss = validate()
    # Note that step should be called after validate()
    scheduler.step(val_loss)
print(val_loss)
