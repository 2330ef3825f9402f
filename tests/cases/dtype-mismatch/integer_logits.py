%%gradcheck
# Scores written by hand as whole numbers
import torch
import torch.nn.functional as F

logits = torch.tensor([[2, 0, 1], [0, 3, 1]])
labels = torch.tensor([0, 1])
loss = F.cross_entropy(logits, labels)
