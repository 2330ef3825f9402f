"""SGD with Nesterov momentum (momentum=0.9, nesterov=True) and weight decay on a small classifier.

source: https://pytorch.org/docs/stable/generated/torch.optim.SGD.html (the example `optimizer =
torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)`, `optimizer.zero_grad()`,
`loss_fn(model(input), target).backward()`, `optimizer.step()`, with nesterov=True); 30 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 20), nn.ReLU(), nn.Linear(20, 3))
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
inputs, targets = torch.randn(60, 6), torch.randint(0, 3, (60,))
# %%
for step in range(30):
    i = (step * 12) % 60
    input, target = inputs[i:i + 12], targets[i:i + 12]
    optimizer.zero_grad()
    loss_fn(model(input), target).backward()
    optimizer.step()
