%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
teacher = nn.Linear(4, 2)
student = nn.Linear(4, 2)
optimizer = torch.optim.SGD(teacher.parameters(), lr=0.1)
x = torch.randn(16, 4)
for step in range(3):
    optimizer.zero_grad()
    loss = student(x).pow(2).mean()
    loss.backward()
    optimizer.step()
