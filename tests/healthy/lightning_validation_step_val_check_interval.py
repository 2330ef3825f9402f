"""A LightningModule classifier with training_step, validation_step (self.log("val_loss")) and a validation
DataLoader, validated every 8 training batches.

source: https://lightning.ai/docs/pytorch/stable/common/evaluation_basic.html (add a validation loop:
`def validation_step(self, batch, batch_idx)`, `self.log("val_loss", val_loss)`, `trainer.fit(model,
train_loader, valid_loader)`) and https://lightning.ai/docs/pytorch/stable/common/trainer.html
(val_check_interval, limit_val_batches); a small MLP on synthetic data, max_steps=24, CPU.
"""
# %%
import tempfile

import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class LitClassifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 4))

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        val_loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(dim=1) == y).float().mean()
        self.log("val_loss", val_loss)
        self.log("val_acc", acc)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-2)


X = torch.randn(160, 10)
y = (X[:, :2].sum(1) > 0).long() + 2 * (X[:, 2] > 0).long()
train_loader = DataLoader(TensorDataset(X[:128], y[:128]), batch_size=8, shuffle=True)
valid_loader = DataLoader(TensorDataset(X[128:], y[128:]), batch_size=16)
model = LitClassifier()
# %%
trainer = L.Trainer(max_steps=24, val_check_interval=8, limit_val_batches=2, num_sanity_val_steps=0,
                    accelerator="cpu", devices=1, default_root_dir=tempfile.mkdtemp(), logger=False,
                    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, train_loader, valid_loader)
