"""bfloat16 autocast on CPU without a GradScaler (bfloat16 keeps float32's range, so no loss scaling):
forward and loss under autocast, backward and step outside it.

source: https://pytorch.org/docs/stable/amp.html#cpu-op-specific-behavior and the CPU example in
https://pytorch.org/docs/stable/amp.html#torch.autocast ("with torch.autocast(device_type='cpu',
dtype=torch.bfloat16)" in a training loop); a small conv net, 30 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
X, Y = torch.randn(30, 1, 8, 8), torch.randint(0, 3, (30,))
# %%
for step in range(30):
    i = (step * 6) % 30
    optimizer.zero_grad()
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        output = model(X[i:i + 6])
        loss = loss_fn(output, Y[i:i + 6])
    loss.backward()
    optimizer.step()
