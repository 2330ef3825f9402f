%%gradcheck
# The forward pass runs under inference_mode; the backward call is outside
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
x, y = torch.randn(8, 3), torch.randn(8, 1)
pred = model(x)
err = pred - y
loss = err.pow(2).mean()
loss.backward()
