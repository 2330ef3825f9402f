%%gradcheck
import torch

w = torch.randn(4, 4, requires_grad=True)
noise = torch.randn(w.size()) * 0.01  # jitter the weights
loss = ((w + noise) ** 2).sum()
loss.backward()
