%%gradcheck --fast
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
anchors = torch.randn(8, 3)
for step in range(3):
    emb = model(anchors)
    # distance of each embedding to itself: 0 on purpose
    dist = torch.sqrt(((emb - emb.detach()) ** 2).sum(dim=1))
    loss = dist.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
