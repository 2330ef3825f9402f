"""Manual optimization in Lightning as its docs show it for a GAN: automatic_optimization=False, the two
optimizers from self.optimizers(), discriminator on real and `g_X.detach()`, then generator, each with
zero_grad / self.manual_backward / step.

source: https://lightning.ai/docs/pytorch/stable/model/manual_optimization.html (the "Use multiple optimizers
(like GANs)" example: `g_opt, d_opt = self.optimizers()`, `errD = errD_real + errD_fake`, `d_opt.zero_grad()`,
`self.manual_backward(errD)`, `d_opt.step()`, then errG); tiny MLPs on 2-D points, 25 batches, CPU.
"""
# %%
import tempfile

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class SimpleGAN(L.LightningModule):
    def __init__(self, latent_dim=4):
        super().__init__()
        self.latent_dim = latent_dim
        self.G = nn.Sequential(nn.Linear(latent_dim, 32), nn.ReLU(), nn.Linear(32, 2))
        self.D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())
        self.criterion = nn.BCELoss()
        # Important: This property activates manual optimization.
        self.automatic_optimization = False

    def sample_z(self, n):
        return torch.randn((n, self.latent_dim), device=self.device)

    def sample_G(self, n):
        z = self.sample_z(n)
        return self.G(z)

    def training_step(self, batch, batch_idx):
        # Implementation follows the PyTorch tutorial:
        # https://pytorch.org/tutorials/beginner/dcgan_faces_tutorial.html
        g_opt, d_opt = self.optimizers()

        X, _ = batch
        batch_size = X.shape[0]

        real_label = torch.ones((batch_size, 1), device=self.device)
        fake_label = torch.zeros((batch_size, 1), device=self.device)

        g_X = self.sample_G(batch_size)

        ##########################
        # Optimize Discriminator #
        ##########################
        d_x = self.D(X)
        errD_real = self.criterion(d_x, real_label)

        d_z = self.D(g_X.detach())
        errD_fake = self.criterion(d_z, fake_label)

        errD = errD_real + errD_fake

        d_opt.zero_grad()
        self.manual_backward(errD)
        d_opt.step()

        ######################
        # Optimize Generator #
        ######################
        d_z = self.D(g_X)
        errG = self.criterion(d_z, real_label)

        g_opt.zero_grad()
        self.manual_backward(errG)
        g_opt.step()

        self.log_dict({"g_loss": errG, "d_loss": errD}, prog_bar=True)

    def configure_optimizers(self):
        g_opt = torch.optim.Adam(self.G.parameters(), lr=1e-3)
        d_opt = torch.optim.Adam(self.D.parameters(), lr=1e-3)
        return g_opt, d_opt


angles = torch.rand(200) * 6.2832
points = torch.stack([angles.cos(), angles.sin()], 1) + 0.05 * torch.randn(200, 2)
loader = DataLoader(TensorDataset(points, torch.zeros(200)), batch_size=8, shuffle=True)
gan = SimpleGAN()
# %%
trainer = L.Trainer(max_epochs=1, limit_train_batches=25, accelerator="cpu", devices=1,
                    default_root_dir=tempfile.mkdtemp(), logger=False, enable_checkpointing=False,
                    enable_progress_bar=False, enable_model_summary=False)
trainer.fit(gan, loader)
