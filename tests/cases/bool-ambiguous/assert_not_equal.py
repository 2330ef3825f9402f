%%gradcheck
import torch

before = torch.zeros(5)
after = before + torch.rand(5)
assert before != after
