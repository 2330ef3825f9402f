"""Early stopping on the validation loss with a patience counter, keeping the best state_dict.

source: https://github.com/Bjarten/early-stopping-pytorch/blob/master/early_stopping.py (EarlyStopping: counter,
patience, best_score, delta; here keeping the best weights in memory instead of saving a checkpoint file)
and its usage in MNIST_Early_Stopping_example.ipynb; up to 40 epochs of one batch, patience=3.
"""
# %%
import copy

import numpy as np
import torch
import torch.nn as nn


class EarlyStopping:
    """Early stops the training if validation loss doesn't improve after a given patience."""

    def __init__(self, patience=7, delta=0):
        self.patience = patience
        self.counter = 0
        self.best_score = None
        self.early_stop = False
        self.val_loss_min = np.inf
        self.delta = delta
        self.best_state = None

    def __call__(self, val_loss, model):
        score = -val_loss
        if self.best_score is None:
            self.best_score = score
            self.save_checkpoint(val_loss, model)
        elif score < self.best_score + self.delta:
            self.counter += 1
            if self.counter >= self.patience:
                self.early_stop = True
        else:
            self.best_score = score
            self.save_checkpoint(val_loss, model)
            self.counter = 0

    def save_checkpoint(self, val_loss, model):
        self.best_state = copy.deepcopy(model.state_dict())
        self.val_loss_min = val_loss


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
X_train, y_train = torch.randn(24, 3), torch.randn(24, 1)
X_valid, y_valid = torch.randn(12, 3), torch.randn(12, 1)
early_stopping = EarlyStopping(patience=3)
# %%
for epoch in range(1, 41):
    model.train()
    optimizer.zero_grad()
    loss = criterion(model(X_train), y_train)
    loss.backward()
    optimizer.step()

    model.eval()
    with torch.no_grad():
        valid_loss = criterion(model(X_valid), y_valid).item()
    early_stopping(valid_loss, model)
    if early_stopping.early_stop:
        break
model.load_state_dict(early_stopping.best_state)
print(early_stopping.val_loss_min)
