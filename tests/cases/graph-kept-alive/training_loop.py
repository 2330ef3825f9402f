%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs, targets = torch.randn(64, 4), torch.randn(64, 1)

for epoch in range(2):
    running_loss = 0.0
    for i in range(0, 64, 16):
        optimizer.zero_grad()
        loss = criterion(model(inputs[i:i + 16]), targets[i:i + 16])
        loss.backward()
        optimizer.step()
        running_loss += loss  # for the log
    print(f"epoch {epoch}: {running_loss / 4:.4f}")
