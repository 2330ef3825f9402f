"""Gradient accumulation in Lightning: Trainer(accumulate_grad_batches=2), with max_steps counting optimizer
steps (20 steps over 40 batches), on a small CNN classifier.

source: https://lightning.ai/docs/pytorch/stable/advanced/training_tricks.html (Accumulate Gradients:
"Accumulate gradients for 7 batches: `trainer = Trainer(accumulate_grad_batches=7)`"); the CNN follows the
LightningModule page https://lightning.ai/docs/pytorch/stable/common/lightning_module.html; 8x8 synthetic
images, accumulate 2, max_steps=20, CPU.
"""
# %%
import tempfile

import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class LitCNN(L.LightningModule):
    def __init__(self, num_classes=3, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.conv = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.fc(self.conv(x).flatten(1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, on_step=True, on_epoch=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


images = torch.randn(160, 1, 8, 8)
labels = torch.randint(0, 3, (160,))
train_loader = DataLoader(TensorDataset(images, labels), batch_size=8, shuffle=True)
model = LitCNN()
# %%
trainer = L.Trainer(max_steps=20, accumulate_grad_batches=2, accelerator="cpu", devices=1,
                    default_root_dir=tempfile.mkdtemp(), logger=False, enable_checkpointing=False,
                    enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, train_loader)
