"""Logistic regression (a single Linear layer, BCEWithLogitsLoss) trained with Adagrad.

source: https://pytorch.org/docs/stable/generated/torch.optim.Adagrad.html with the logistic-regression
model of https://d2l.ai/chapter_linear-classification/softmax-regression-concise.html (one nn.Linear);
a random linearly separable-ish set, 30 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
w_true = torch.randn(5)
X = torch.randn(80, 5)
y = (X @ w_true > 0).float()
model = nn.Linear(5, 1)
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adagrad(model.parameters(), lr=0.1)
# %%
for step in range(30):
    i = (step * 16) % 80
    logits = model(X[i:i + 16]).squeeze(1)
    loss = criterion(logits, y[i:i + 16])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
