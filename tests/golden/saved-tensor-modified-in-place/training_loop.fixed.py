%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
inputs, targets = torch.randn(16, 4), torch.rand(16, 1)

for epoch in range(3):
    optimizer.zero_grad()
    probs = torch.sigmoid(model(inputs))
    probs = probs + 1e-6  # keep log() away from zero
    loss = -(targets * probs.log()).mean()
    loss.backward()
    optimizer.step()
