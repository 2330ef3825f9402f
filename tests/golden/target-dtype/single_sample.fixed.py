%%gradcheck
# One sample, one label: a 0-d float target is not a class number
import torch
import torch.nn.functional as F

scores = torch.randn(3, requires_grad=True)
label = torch.tensor(2.0, dtype=torch.long)
loss = F.cross_entropy(scores, label)
loss.backward()
