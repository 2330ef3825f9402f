"""Class-imbalanced classification with CrossEntropyLoss(weight=...) set from inverse class frequencies.

source: https://pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html (the `weight` argument: "a
manual rescaling weight given to each class ... useful when you have an unbalanced training set"); weights =
total / (n_classes * counts) as in scikit-learn's compute_class_weight('balanced'); 30 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
Y = torch.cat([torch.zeros(40, dtype=torch.long), torch.ones(12, dtype=torch.long), torch.full((8,), 2)])
Y = Y[torch.randperm(60)]
X = torch.randn(60, 5) + Y.unsqueeze(1).float()
counts = torch.bincount(Y, minlength=3).float()
class_weights = counts.sum() / (3 * counts)
model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
criterion = nn.CrossEntropyLoss(weight=class_weights)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
# %%
for step in range(30):
    i = (step * 15) % 60
    optimizer.zero_grad()
    loss = criterion(model(X[i:i + 15]), Y[i:i + 15])
    loss.backward()
    optimizer.step()
