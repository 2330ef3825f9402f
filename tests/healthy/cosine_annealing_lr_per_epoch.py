"""CosineAnnealingLR over the epochs, stepped once after each epoch's batches (Adam).

source: https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate (the pattern `for epoch in
range(20): for input, target in dataset: ... optimizer.step()` then `scheduler.step()`), with
torch.optim.lr_scheduler.CosineAnnealingLR(T_max=epochs); 6 epochs of 5 random batches.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 12), nn.Tanh(), nn.Linear(12, 3))
loss_fn = nn.CrossEntropyLoss()
dataset = [(torch.randn(8, 5), torch.randint(0, 3, (8,))) for _ in range(5)]
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=6, eta_min=1e-4)
# %%
for epoch in range(6):
    for input, target in dataset:
        optimizer.zero_grad()
        output = model(input)
        loss = loss_fn(output, target)
        loss.backward()
        optimizer.step()
    scheduler.step()
print(scheduler.get_last_lr()[0])
