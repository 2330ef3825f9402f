%%gradcheck
# Resume training from a checkpoint written on a GPU machine (ckpt_path comes from an earlier cell)
import torch
import torch.nn as nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
checkpoint = torch.load(ckpt_path)
model.load_state_dict(checkpoint["model"])
optimizer.load_state_dict(checkpoint["optimizer"])
for epoch in range(checkpoint["epoch"], 5):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
