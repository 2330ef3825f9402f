import torch
import torch.nn as nn

model = nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)

def train_step(x):
    opt.zero_grad()
    loss = model(x).pow(2).sum()
    loss.backward()
    opt.step()
    return loss
