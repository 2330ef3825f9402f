%%gradcheck
# XOR training data typed as integers, then asked for gradients
import torch
import torch.nn as nn

torch.manual_seed(0)
inputs = torch.tensor([[0, 0], [0, 1], [1, 0], [1, 1]])
inputs.requires_grad_()
targets = torch.tensor([[0.0], [1.0], [1.0], [0.0]])
model = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for epoch in range(5):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(inputs.float()), targets)
    loss.backward()
    opt.step()
