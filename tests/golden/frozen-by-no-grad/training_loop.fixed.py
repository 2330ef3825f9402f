%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs, targets = torch.randn(64, 4), torch.randn(64, 1)

for epoch in range(2):
    for i in range(0, 64, 16):
        optimizer.zero_grad()
        output = model(inputs[i:i + 16])
        loss = criterion(output, targets[i:i + 16])
        loss.backward()
        optimizer.step()
