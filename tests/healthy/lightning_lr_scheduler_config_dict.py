"""configure_optimizers returning an optimizer and an lr_scheduler config dict (OneCycleLR stepped every
training step: "interval": "step", "frequency": 1).

source: https://lightning.ai/docs/pytorch/stable/common/lightning_module.html (configure_optimizers: "The
lr_scheduler_config is a dictionary which contains the scheduler and its associated configuration", `return
{"optimizer": optimizer, "lr_scheduler": {"scheduler": ..., "interval": "step", "frequency": 1}}`); an MLP
regressor, SGD, max_steps=25, CPU.
"""
# %%
import tempfile

import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class LitRegressor(L.LightningModule):
    def __init__(self, max_steps=25):
        super().__init__()
        self.max_steps = max_steps
        self.net = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)
        scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=self.max_steps)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {
                "scheduler": scheduler,
                "interval": "step",
                "frequency": 1,
            },
        }


X = torch.randn(120, 6)
y = X @ torch.randn(6, 1) + 0.1 * torch.randn(120, 1)
loader = DataLoader(TensorDataset(X, y), batch_size=12, shuffle=True)
model = LitRegressor()
# %%
trainer = L.Trainer(max_steps=25, accelerator="cpu", devices=1, default_root_dir=tempfile.mkdtemp(), logger=False,
                    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, loader)
