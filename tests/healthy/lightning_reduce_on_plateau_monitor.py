"""A Lightning scheduler config with ReduceLROnPlateau and a "monitor" key: the LR drops when the logged
val_loss stops improving; validation runs every epoch (4 training batches each).

source: https://lightning.ai/docs/pytorch/stable/common/lightning_module.html (configure_optimizers:
`"lr_scheduler": {"scheduler": ReduceLROnPlateau(optimizer, ...), "monitor": "metric_to_track",
"frequency": "indicates how often the metric is updated"}`, and "If using the ReduceLROnPlateau scheduler,
the 'monitor' key must be set"); an MLP classifier, 7 epochs (28 steps), CPU.
"""
# %%
import tempfile

import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.lr_scheduler import ReduceLROnPlateau
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class LitPlateau(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 24), nn.ReLU(), nn.Linear(24, 2))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.cross_entropy(self.net(x), y))

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=1e-2)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {
                "scheduler": ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=1),
                "monitor": "val_loss",
                "frequency": 1,
            },
        }


X = torch.randn(48, 8)
y = (X[:, 0] * X[:, 1] > 0).long()
train_loader = DataLoader(TensorDataset(X[:32], y[:32]), batch_size=8, shuffle=True)
val_loader = DataLoader(TensorDataset(X[32:], y[32:]), batch_size=16)
model = LitPlateau()
# %%
trainer = L.Trainer(max_epochs=7, num_sanity_val_steps=0, accelerator="cpu", devices=1,
                    default_root_dir=tempfile.mkdtemp(), logger=False, enable_checkpointing=False,
                    enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, train_loader, val_loader)
