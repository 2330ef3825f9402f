"""Gradient clipping in Lightning: Trainer(gradient_clip_val=0.5) (clip by norm, the default algorithm) around
an LSTM sequence regressor's automatic optimization.

source: https://lightning.ai/docs/pytorch/stable/advanced/training_tricks.html (Gradient Clipping: "clip
gradients' global norm to <=0.5 using gradient_clip_algorithm='norm' by default: `trainer =
Trainer(gradient_clip_val=0.5)`"); a small LSTM on synthetic sequences, SGD, max_steps=25, CPU.
"""
# %%
import tempfile

import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class LitSequenceRegressor(L.LightningModule):
    def __init__(self, hidden_size=16):
        super().__init__()
        self.lstm = nn.LSTM(input_size=3, hidden_size=hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.5, momentum=0.9)


X = torch.randn(200, 12, 3)
y = X.sum(dim=(1, 2)).unsqueeze(1) / 6
loader = DataLoader(TensorDataset(X, y), batch_size=8, shuffle=True)
model = LitSequenceRegressor()
# %%
trainer = L.Trainer(max_steps=25, gradient_clip_val=0.5, accelerator="cpu", devices=1,
                    default_root_dir=tempfile.mkdtemp(), logger=False, enable_checkpointing=False,
                    enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, loader)
