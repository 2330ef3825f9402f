import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
dataset = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(5)]
