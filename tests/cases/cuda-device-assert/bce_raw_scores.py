%%gradcheck
import torch
import torch.nn as nn
import torch.nn.functional as F

# NB: no GPU here: torch 1.0's message is raised by hand where the loss kernel's check (`input_val >= zero &&
# input_val <= one`) would stop it: the scores go to binary_cross_entropy without a sigmoid.
ASSERT = ("cuda runtime error (59) : device-side assert triggered at /pytorch/aten/src/THCUNN/generic/"
          "BCECriterion.cu:57")
torch.manual_seed(0)
scorer = nn.Linear(5, 1)
x = torch.randn(20, 5)
y = torch.randint(0, 2, (20, 1)).float()
scores = scorer(x)
if float(scores.min()) < 0 or float(scores.max()) > 1:
    raise RuntimeError(ASSERT)
loss = F.binary_cross_entropy(scores, y)
loss.backward()
