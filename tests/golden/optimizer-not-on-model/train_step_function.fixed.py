%%gradcheck
import torch
import torch.nn as nn

model = nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
print(model(torch.ones(1, 2)))
for _ in range(3):
    train_step(torch.randn(4, 2))
