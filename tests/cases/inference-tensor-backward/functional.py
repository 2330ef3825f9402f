%%gradcheck
# Features from a frozen encoder made under inference_mode, then a trainable head on top
import torch

torch.manual_seed(0)
encoder = torch.nn.Linear(10, 6)
x = torch.randn(4, 10)
with torch.inference_mode():
    features = torch.relu(encoder(x))
w = torch.randn(6, 1, requires_grad=True)
score = (features @ w).sum()
score.backward()
