%%gradcheck
import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

# NB: rank 0 of 2, given by hand: the sampler needs no process group to say which half is this rank's
data = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
sampler = DistributedSampler(data, num_replicas=2, rank=0)
loader = DataLoader(data, batch_size=8, sampler=sampler)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
