%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
epochs = [[(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)] for _ in range(3)]

for micro_batches in epochs:
    for input, target in micro_batches:
        loss = nn.functional.mse_loss(model(input), target)
        loss.backward()
    optimizer.step()
