"""Lightning's StochasticWeightAveraging callback: from swa_epoch_start on it swaps the user's scheduler for
an SWALR annealing to swa_lrs and folds the weights into an averaged copy after each epoch; at the end it
copies the average back into the model and, since the model has BatchNorm, runs one extra forward-only epoch
in train mode to recompute the running statistics (the optimizer and training_step untouched meanwhile).

source: https://lightning.ai/docs/pytorch/stable/api/lightning.pytorch.callbacks.StochasticWeightAveraging.html
(`StochasticWeightAveraging(swa_lrs, swa_epoch_start=0.8, annealing_epochs=10, ...)`, "the procedure will
start from the swa_epoch_start-th epoch"), used as `Trainer(callbacks=[StochasticWeightAveraging(swa_lrs=
1e-2)])`; an MLP with BatchNorm1d on synthetic regression data, SGD with a StepLR, max_epochs 4,
swa_epoch_start 2, annealing_epochs 1, 6 batches an epoch (24 steps), CPU.
"""
# %%
import tempfile

import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import StochasticWeightAveraging
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class LitRegressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
        return [optimizer], [scheduler]


torch.manual_seed(0)
X = torch.randn(96, 8)
Y = X[:, :3].sum(1, keepdim=True) + 0.1 * torch.randn(96, 1)
train_loader = DataLoader(TensorDataset(X, Y), batch_size=16, shuffle=True)
model = LitRegressor()
# %%
trainer = L.Trainer(max_epochs=4, accelerator="cpu", devices=1,
                    callbacks=[StochasticWeightAveraging(swa_lrs=1e-2, swa_epoch_start=2, annealing_epochs=1)],
                    default_root_dir=tempfile.mkdtemp(), logger=False, enable_checkpointing=False,
                    enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, train_loader)
