%%gradcheck
import torch
import torch.nn as nn

tags = torch.tensor([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1]])  # several tags a sample
head = nn.Linear(8, 3)
loss = nn.CrossEntropyLoss()(head(torch.randn(4, 8)), tags)
