%%gradcheck
# Reading the gradient of a hidden activation of a module
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


torch.manual_seed(0)
mlp = MLP()
x = torch.randn(5, 4)
hidden = mlp.fc1(x)
out = mlp.fc2(torch.relu(hidden)).sum()
out.backward()
print(hidden.grad)
