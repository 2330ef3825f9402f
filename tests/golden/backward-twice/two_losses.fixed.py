%%gradcheck
# Two heads on a shared encoder, each loss backpropagated on its own
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
cls_head, reg_head = nn.Linear(8, 3), nn.Linear(8, 1)
x, labels, values = torch.randn(4, 6), torch.randint(0, 3, (4,)), torch.randn(4, 1)

features = encoder(x)
cls_loss = nn.functional.cross_entropy(cls_head(features), labels)
reg_loss = nn.functional.mse_loss(reg_head(features), values)
cls_loss.backward(retain_graph=True)
reg_loss.backward()
