%%gradcheck
import torch
import torch.nn as nn

n_features = 10
data = torch.randn(16, 12)
head = nn.Sequential(nn.Linear(n_features, 32), nn.ReLU(), nn.Linear(32, 1))
out = head(data)
