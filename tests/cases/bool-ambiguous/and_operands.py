%%gradcheck
import torch

scores = torch.tensor([0.2, 0.9, 0.4])
threshold = 0.5
enabled = True
if enabled and scores > threshold:
    print("some score is high")
