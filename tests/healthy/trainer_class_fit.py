"""A minimal Trainer class (model, optimizer, loaders in __init__; fit() runs train_epoch() and evaluate() per
epoch and keeps a history dict), defined in an earlier cell and used as trainer.fit() in the last.

source: https://d2l.ai/chapter_linear-regression/oo-design.html (d2l's Trainer: prepare_batch, fit,
fit_epoch with model.train()/eval() and a no_grad validation pass), written without d2l's Module/DataModule
helpers; a small classifier on random data, 4 epochs of 8 batches.
"""
# %%
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, optimizer, loss_fn, train_loader, val_loader, max_epochs=4):
        self.model = model
        self.optimizer = optimizer
        self.loss_fn = loss_fn
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.max_epochs = max_epochs
        self.history = {"train_loss": [], "val_loss": [], "val_acc": []}

    def train_epoch(self):
        self.model.train()
        total, n = 0.0, 0
        for X, y in self.train_loader:
            self.optimizer.zero_grad()
            loss = self.loss_fn(self.model(X), y)
            loss.backward()
            self.optimizer.step()
            total += loss.item() * len(y)
            n += len(y)
        return total / n

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        total, correct, n = 0.0, 0, 0
        for X, y in self.val_loader:
            out = self.model(X)
            total += self.loss_fn(out, y).item() * len(y)
            correct += (out.argmax(dim=1) == y).sum().item()
            n += len(y)
        return total / n, correct / n

    def fit(self):
        for epoch in range(self.max_epochs):
            self.history["train_loss"].append(self.train_epoch())
            val_loss, val_acc = self.evaluate()
            self.history["val_loss"].append(val_loss)
            self.history["val_acc"].append(val_acc)
        return self.history


train_loader = DataLoader(TensorDataset(torch.randn(64, 10), torch.randint(0, 3, (64,))), batch_size=8,
                          shuffle=True)
val_loader = DataLoader(TensorDataset(torch.randn(24, 10), torch.randint(0, 3, (24,))), batch_size=12)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
trainer = Trainer(model, optimizer, nn.CrossEntropyLoss(), train_loader, val_loader)
# %%
history = trainer.fit()
print(history["val_loss"][-1])
