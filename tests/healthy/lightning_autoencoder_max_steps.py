"""The Lightning starter LitAutoEncoder (encoder/decoder MLPs, MSE reconstruction, self.log, Adam), fit with
Trainer(max_steps=25) on a DataLoader.

source: https://lightning.ai/docs/pytorch/stable/starter/introduction.html (LitAutoEncoder: training_step with
`x = x.view(x.size(0), -1)`, `z = self.encoder(x)`, `x_hat = self.decoder(z)`, `loss =
nn.functional.mse_loss(x_hat, x)`, `self.log("train_loss", loss)`; configure_optimizers returning Adam);
8x8 synthetic images instead of MNIST, max_steps=25, CPU, no logger/checkpoints/progress bar.
"""
# %%
import tempfile

import lightning as L
import torch
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8 * 8, 32), nn.ReLU(), nn.Linear(32, 3))
decoder = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 8 * 8))


class LitAutoEncoder(L.LightningModule):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def training_step(self, batch, batch_idx):
        # training_step defines the train loop.
        x, _ = batch
        x = x.view(x.size(0), -1)
        z = self.encoder(x)
        x_hat = self.decoder(z)
        loss = nn.functional.mse_loss(x_hat, x)
        # Logging to TensorBoard (if installed) by default
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        optimizer = optim.Adam(self.parameters(), lr=1e-3)
        return optimizer


dataset = TensorDataset(torch.rand(128, 1, 8, 8), torch.randint(0, 10, (128,)))
train_loader = DataLoader(dataset, batch_size=16)
autoencoder = LitAutoEncoder(encoder, decoder)
# %%
trainer = L.Trainer(max_steps=25, accelerator="cpu", devices=1, default_root_dir=tempfile.mkdtemp(), logger=False,
                    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model=autoencoder, train_dataloaders=train_loader)
