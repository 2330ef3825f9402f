%%gradcheck
# A training loop whose forward pass was wrapped in no_grad (copied from the evaluation code)
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.MSELoss()
data = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(3)]

for inputs, targets in data:
    optimizer.zero_grad()
    with torch.no_grad():
        outputs = model(inputs)
    loss = criterion(outputs, targets)
    loss.backward()
    optimizer.step()
