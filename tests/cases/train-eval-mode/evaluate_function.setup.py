import torch
import torch.nn as nn

torch.manual_seed(0)
classifier = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.4), nn.Linear(16, 2))
