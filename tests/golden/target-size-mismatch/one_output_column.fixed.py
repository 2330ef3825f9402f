%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))  # one logit per example
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(32, 8), torch.randint(0, 2, (32,)).float()

for step in range(3):
    optimizer.zero_grad()
    output = model(x)
    loss = criterion(output.squeeze(1), y)
    loss.backward()
    optimizer.step()
