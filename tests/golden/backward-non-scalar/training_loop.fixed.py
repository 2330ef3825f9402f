%%gradcheck
# A regression loop whose loss is the squared error per sample, never averaged
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(3)]

for inputs, targets in data:
    optimizer.zero_grad()
    outputs = model(inputs)
    loss = (outputs - targets) ** 2
    loss.mean().backward()
    optimizer.step()
