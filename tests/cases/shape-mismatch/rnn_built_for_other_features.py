%%gradcheck
import torch

words = torch.randn(4, 10, 6)
scores = tagger(words)
