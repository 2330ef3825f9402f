%%gradcheck
import torch
import torch.nn.functional as F

logits = torch.randn(6, requires_grad=True)
is_spam = torch.randint(0, 2, (6,)).float()
loss = F.binary_cross_entropy(torch.sigmoid(logits), is_spam)
loss.backward()
