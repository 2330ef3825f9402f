"""A DataLoader(TensorDataset(x, y), batch_size, shuffle=True, num_workers=0) feeding the loop, as in the
"What is torch.nn really?" tutorial's get_data/fit.

source: https://pytorch.org/tutorials/beginner/nn_tutorial.html (TensorDataset + DataLoader, loss_batch, fit
with model.train()/model.eval() and the validation loss under no_grad); random 16-feature data, 4 epochs of
8 batches.
"""
# %%
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x_train, y_train = torch.randn(64, 16), torch.randint(0, 4, (64,))
x_valid, y_valid = torch.randn(32, 16), torch.randint(0, 4, (32,))
bs = 8
train_ds = TensorDataset(x_train, y_train)
valid_ds = TensorDataset(x_valid, y_valid)


def get_data(train_ds, valid_ds, bs):
    return (
        DataLoader(train_ds, batch_size=bs, shuffle=True, num_workers=0),
        DataLoader(valid_ds, batch_size=bs * 2, num_workers=0),
    )


def loss_batch(model, loss_func, xb, yb, opt=None):
    loss = loss_func(model(xb), yb)
    if opt is not None:
        loss.backward()
        opt.step()
        opt.zero_grad()
    return loss.item(), len(xb)


train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loss_func = F.cross_entropy
# %%
for epoch in range(4):
    model.train()
    for xb, yb in train_dl:
        loss_batch(model, loss_func, xb, yb, opt)

    model.eval()
    with torch.no_grad():
        losses, nums = zip(*[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl])
    val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
print(val_loss)
