"""A LightningDataModule (setup splits a dataset, train/val dataloaders) passed to trainer.fit with a
LightningModule classifier.

source: https://lightning.ai/docs/pytorch/stable/data/datamodule.html (MNISTDataModule: `setup(stage)`
with random_split, `train_dataloader` / `val_dataloader`, `trainer.fit(model, datamodule=dm)`); a synthetic
TensorDataset instead of MNIST, max_steps=25, CPU.
"""
# %%
import tempfile

import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)


class SyntheticDataModule(L.LightningDataModule):
    def __init__(self, batch_size: int = 16):
        super().__init__()
        self.batch_size = batch_size

    def setup(self, stage: str):
        generator = torch.Generator().manual_seed(42)
        X = torch.randn(240, 16, generator=generator)
        y = (X[:, :4].sum(1) > 0).long()
        full = TensorDataset(X, y)
        if stage == "fit":
            self.train_set, self.val_set = random_split(full, [200, 40], generator=generator)

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=self.batch_size)


class LitModel(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer_1 = nn.Linear(16, 32)
        self.layer_2 = nn.Linear(32, 2)

    def forward(self, x):
        return self.layer_2(F.relu(self.layer_1(x)))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.cross_entropy(self(x), y))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


dm = SyntheticDataModule()
model = LitModel()
# %%
trainer = L.Trainer(max_steps=25, accelerator="cpu", devices=1, default_root_dir=tempfile.mkdtemp(), logger=False,
                    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, datamodule=dm)
