%%gradcheck
# Binary labels loaded with numpy: 0.0 / 1.0 as float64
import numpy as np
import torch
import torch.nn as nn

clicked = np.array([0.0, 1.0, 1.0, 0.0])
labels = torch.from_numpy(clicked).float()
scorer = nn.Sequential(nn.Linear(6, 1), nn.Sigmoid())
probs = scorer(torch.randn(4, 6)).squeeze(1)
loss = nn.functional.binary_cross_entropy(probs, labels)
loss.backward()
