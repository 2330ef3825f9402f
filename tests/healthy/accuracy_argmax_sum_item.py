"""Training accuracy counted alongside the loss: correct += (pred.argmax(1) == y).type(torch.float).sum().item().

source: https://pytorch.org/tutorials/beginner/basics/optimization_tutorial.html (the accuracy line of
test_loop, here also used in the training loop) ; a small MLP on random 2-feature blobs, 4 epochs of 8 batches.
"""
# %%
import torch
from torch import nn

torch.manual_seed(0)
centers = torch.tensor([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.0]])
y_all = torch.randint(0, 3, (64,))
X_all = centers[y_all] + 0.5 * torch.randn(64, 2)
model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 3))
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
# %%
for epoch in range(4):
    correct, seen = 0, 0
    for b in range(8):
        X, y = X_all[b * 8:(b + 1) * 8], y_all[b * 8:(b + 1) * 8]
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        correct += (pred.argmax(1) == y).type(torch.float).sum().item()
        seen += len(y)
    accuracy = correct / seen
print(accuracy)
