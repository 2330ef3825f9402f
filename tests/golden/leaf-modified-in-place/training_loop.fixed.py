%%gradcheck
# A training loop with a hand-written SGD step over the model's parameters
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
data = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(3)]

for inputs, targets in data:
    model.zero_grad()
    loss = nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    for p in model.parameters():
        with torch.no_grad():
            p -= 0.01 * p.grad
