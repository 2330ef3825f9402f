%%gradcheck
import torch
import torch.nn as nn

conv = nn.Conv2d(1, 6, 5)
digits = torch.rand(16, 28, 28)  # a batch of 28x28 grayscale digits
features = torch.relu(conv(digits))
