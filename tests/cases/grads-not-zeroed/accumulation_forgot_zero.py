%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
accumulation_steps = 4
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(8)]

optimizer.zero_grad()
for i, (input, target) in enumerate(batches):
    loss = nn.functional.mse_loss(model(input), target) / accumulation_steps
    loss.backward()
    if (i + 1) % accumulation_steps == 0:
        optimizer.step()
