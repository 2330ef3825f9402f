"""Mixed precision on CPU: the forward under torch.autocast("cpu", dtype=torch.bfloat16), the backward through
torch.amp.GradScaler("cpu"): scale(loss).backward(), scaler.step(optimizer), scaler.update().

source: https://pytorch.org/docs/stable/amp.html and https://pytorch.org/docs/stable/notes/amp_examples.html
("Typical Mixed Precision Training": autocast around forward + loss, scaler.scale/step/update), with device
"cpu" and bfloat16; a small MLP, 30 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu")
data = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(6)]
# %%
for epoch in range(5):
    for input, target in data:
        optimizer.zero_grad()
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            output = model(input)
            loss = loss_fn(output, target)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
