"""Train and validation loss curves kept as Python lists of floats (loss.item() per step, one validation value
per epoch), as in d2l's plotting loops.

source: https://d2l.ai/chapter_linear-regression/linear-regression-concise.html (the PyTorch version of
d2l 0.17: nn.Sequential(nn.Linear(2, 1)), weight.data.normal_(0, 0.01), MSELoss, SGD lr=0.03, true_w = [2, -3.4],
true_b = 4.2), with the loss kept per step and per epoch in lists; 100 synthetic samples, 3 epochs of 10 batches.
"""
# %%
import torch
from torch import nn

torch.manual_seed(0)
true_w, true_b = torch.tensor([2, -3.4]), 4.2
features = torch.randn(100, 2)
labels = (features @ true_w + true_b + 0.01 * torch.randn(100)).reshape(-1, 1)
net = nn.Sequential(nn.Linear(2, 1))
net[0].weight.data.normal_(0, 0.01)
net[0].bias.data.fill_(0)
loss = nn.MSELoss()
trainer = torch.optim.SGD(net.parameters(), lr=0.03)
batch_size = 10
# %%
train_losses, val_losses = [], []
for epoch in range(3):
    for i in range(0, 100, batch_size):
        X, y = features[i:i + batch_size], labels[i:i + batch_size]
        l = loss(net(X), y)
        trainer.zero_grad()
        l.backward()
        trainer.step()
        train_losses.append(l.item())
    with torch.no_grad():
        val_losses.append(float(loss(net(features), labels)))
print(val_losses[-1])
