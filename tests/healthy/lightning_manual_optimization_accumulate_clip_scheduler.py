"""Manual optimization in Lightning combining the documented recipes: loss scaled by 1/N and the optimizer
stepped every N batches, self.clip_gradients before each step, and the scheduler from self.lr_schedulers()
stepped after it.

source: https://lightning.ai/docs/pytorch/stable/model/manual_optimization.html (Gradient Accumulation:
`loss = self.compute_loss(batch) / N`, `self.manual_backward(loss)`, `if (batch_idx + 1) % N == 0:
opt.step(); opt.zero_grad()`; Gradient Clipping: `self.clip_gradients(opt, gradient_clip_val=0.5,
gradient_clip_algorithm="norm")`; Learning Rate Scheduling: `sch = self.lr_schedulers(); sch.step()`);
an MLP classifier, N=2, 40 batches (20 optimizer steps), CPU.
"""
# %%
import tempfile

import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
N = 2


class LitManual(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3))

    def compute_loss(self, batch):
        x, y = batch
        return F.cross_entropy(self.model(x), y)

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        sch = self.lr_schedulers()

        # scale losses by 1/N (for N batches of gradient accumulation)
        loss = self.compute_loss(batch) / N
        self.manual_backward(loss)

        # accumulate gradients of N batches
        if (batch_idx + 1) % N == 0:
            self.clip_gradients(opt, gradient_clip_val=0.5, gradient_clip_algorithm="norm")
            opt.step()
            opt.zero_grad()
            sch.step()
        self.log("train_loss", loss * N)

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=1e-2)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.7)
        return [optimizer], [scheduler]


X = torch.randn(320, 12)
y = torch.randint(0, 3, (320,))
loader = DataLoader(TensorDataset(X, y), batch_size=8)
model = LitManual()
# %%
trainer = L.Trainer(max_epochs=1, limit_train_batches=40, accelerator="cpu", devices=1,
                    default_root_dir=tempfile.mkdtemp(), logger=False, enable_checkpointing=False,
                    enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, loader)
