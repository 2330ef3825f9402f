"""mixup: inputs mixed with a shuffled copy by lam ~ Beta(alpha, alpha), the loss mixed the same way between the
two label sets.

source: https://github.com/facebookresearch/mixup-cifar10/blob/main/train.py (mixup_data, mixup_criterion and
the train() step kept; a small MLP, random data, 30 steps).
"""
# %%
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
np.random.seed(0)


def mixup_data(x, y, alpha=1.0):
    '''Returns mixed inputs, pairs of targets, and lambda'''
    if alpha > 0:
        lam = np.random.beta(alpha, alpha)
    else:
        lam = 1
    batch_size = x.size()[0]
    index = torch.randperm(batch_size)
    mixed_x = lam * x + (1 - lam) * x[index, :]
    y_a, y_b = y, y[index]
    return mixed_x, y_a, y_b, lam


def mixup_criterion(criterion, pred, y_a, y_b, lam):
    return lam * criterion(pred, y_a) + (1 - lam) * criterion(pred, y_b)


net = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5))
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
X, Y = torch.randn(40, 10), torch.randint(0, 5, (40,))
# %%
net.train()
train_loss = 0
correct = 0
total = 0
for batch_idx in range(30):
    j = (batch_idx * 8) % 40
    inputs, targets = X[j:j + 8], Y[j:j + 8]
    inputs, targets_a, targets_b, lam = mixup_data(inputs, targets, 1.0)
    outputs = net(inputs)
    loss = mixup_criterion(criterion, outputs, targets_a, targets_b, lam)
    train_loss += loss.item()
    _, predicted = torch.max(outputs.data, 1)
    total += targets.size(0)
    correct += (lam * predicted.eq(targets_a.data).cpu().sum().float()
                + (1 - lam) * predicted.eq(targets_b.data).cpu().sum().float())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(train_loss / 30)
