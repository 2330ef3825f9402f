"""Per-parameter options: the base uses the default lr, the classifier its own, in one SGD optimizer.

source: https://pytorch.org/docs/stable/optim.html#per-parameter-options (`optim.SGD([{'params':
model.base.parameters(), 'lr': 1e-2}, {'params': model.classifier.parameters()}], lr=1e-3, momentum=0.9)`);
a model with .base and .classifier, 30 steps on random data.
"""
# %%
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 20), nn.ReLU())
        self.classifier = nn.Linear(20, 4)

    def forward(self, x):
        return self.classifier(self.base(x))


model = Model()
optimizer = optim.SGD([
    {'params': model.base.parameters(), 'lr': 1e-2},
    {'params': model.classifier.parameters()}
], lr=1e-3, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
X, Y = torch.randn(48, 10), torch.randint(0, 4, (48,))
# %%
for step in range(30):
    i = (step * 12) % 48
    optimizer.zero_grad()
    loss = loss_fn(model(X[i:i + 12]), Y[i:i + 12])
    loss.backward()
    optimizer.step()
