"""Lightning's BaseFinetuning callback: freeze_before_training freezes the feature extractor before
configure_optimizers runs (which builds Adam over `filter(lambda p: p.requires_grad, self.parameters())`, so
only the head), and at the chosen epoch finetune_function calls unfreeze_and_add_param_group, which turns
requires_grad back on and appends the extractor's parameters to the live optimizer as a new param group with a
lower lr; BatchNorm layers stay trainable (train_bn=True).

source: https://lightning.ai/docs/pytorch/stable/api/lightning.pytorch.callbacks.BaseFinetuning.html (the
example: MyModel.configure_optimizer with the requires_grad filter, FeatureExtractorFreezeUnfreeze with
`self.freeze(pl_module.feature_extractor)` and `self.unfreeze_and_add_param_group(modules=
pl_module.feature_extractor, optimizer=optimizer, train_bn=True)` at `current_epoch == self._unfreeze_at_epoch`);
a conv feature extractor with BatchNorm and a linear classifier on 8x8 synthetic images, unfreeze at epoch 1
of 3, 8 batches an epoch (24 steps), CPU.
"""
# %%
import tempfile

import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import BaseFinetuning
from torch import nn
from torch.optim import Adam
from torch.utils.data import DataLoader, TensorDataset


class MyModel(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.feature_extractor = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                               nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Linear(16, 4)

    def forward(self, x):
        return self.classifier(self.feature_extractor(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        # Make sure to filter the parameters based on `requires_grad`
        return Adam(filter(lambda p: p.requires_grad, self.parameters()), lr=1e-2)


class FeatureExtractorFreezeUnfreeze(BaseFinetuning):
    def __init__(self, unfreeze_at_epoch=10):
        super().__init__()
        self._unfreeze_at_epoch = unfreeze_at_epoch

    def freeze_before_training(self, pl_module):
        # freeze any module you want
        # Here, we are freezing `feature_extractor`
        self.freeze(pl_module.feature_extractor)

    def finetune_function(self, pl_module, current_epoch, optimizer):
        # When `current_epoch` is 10, feature_extractor will start training.
        if current_epoch == self._unfreeze_at_epoch:
            self.unfreeze_and_add_param_group(
                modules=pl_module.feature_extractor,
                optimizer=optimizer,
                train_bn=True,
            )


torch.manual_seed(0)
y = torch.randint(0, 4, (128,))
x = torch.randn(128, 3, 8, 8) * 0.5
x[torch.arange(128), y % 3] += (y.view(-1, 1, 1).float() - 1.5)
loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
model = MyModel()
# %%
trainer = L.Trainer(max_epochs=3, accelerator="cpu", devices=1, callbacks=[FeatureExtractorFreezeUnfreeze(1)],
                    default_root_dir=tempfile.mkdtemp(), logger=False, enable_checkpointing=False,
                    enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, loader)
