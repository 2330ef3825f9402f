%%gradcheck
import torch
import torch.nn.functional as F

torch.manual_seed(0)
w = torch.randn(5, 1, requires_grad=True)
features, labels = torch.randn(10, 5), torch.randint(0, 2, (10,)).float()
probs = torch.sigmoid(features @ w)
loss = F.binary_cross_entropy(probs.squeeze(1), labels)
