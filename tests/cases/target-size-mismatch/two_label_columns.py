%%gradcheck
import torch
import torch.nn.functional as F

scores = torch.randn(6, 1, requires_grad=True)
labels = torch.randint(0, 2, (6, 2)).float()  # two columns of labels for a one-column model
loss = F.binary_cross_entropy_with_logits(scores, labels)
