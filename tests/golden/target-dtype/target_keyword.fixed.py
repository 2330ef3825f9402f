%%gradcheck
import torch
import torch.nn as nn

head = nn.Linear(8, 4)
criterion = nn.CrossEntropyLoss()
feats = torch.randn(5, 8)
loss = criterion(input=head(feats), target=(torch.rand(5) * 4).long())
