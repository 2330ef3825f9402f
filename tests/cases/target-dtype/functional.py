%%gradcheck
import numpy as np
import torch
import torch.nn.functional as F

scores = torch.randn(3, 5, requires_grad=True)
target = torch.from_numpy(np.array([1.0, 0.0, 4.0]))
loss = F.nll_loss(F.log_softmax(scores, dim=1), target)
loss.backward()
