%%gradcheck
import torch
import torch.nn as nn

class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x

model = MLP([4, 8, 2])
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
