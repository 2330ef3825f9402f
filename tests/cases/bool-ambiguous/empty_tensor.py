%%gradcheck
import torch

labels = torch.tensor([0, 2, 1])
hits = labels[labels > 5]
if hits:
    print("found large labels")
