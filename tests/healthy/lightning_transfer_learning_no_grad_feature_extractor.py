"""Lightning's transfer-learning example: a "pretrained" backbone cut before its fc layer becomes
`self.feature_extractor` (put in eval() in __init__), forward computes the representations under
torch.no_grad() and only the new linear classifier sees a gradient; configure_optimizers hands Adam all of
self.parameters(), so the extractor's parameters sit in the optimizer without ever getting a .grad.

source: https://lightning.ai/docs/pytorch/stable/advanced/transfer_learning.html ("Example: Imagenet
(Computer Vision)": ImagenetTransferLearning with `layers = list(backbone.children())[:-1]`,
`self.feature_extractor.eval()`, `with torch.no_grad(): representations =
self.feature_extractor(x).flatten(1)`, then `trainer.fit(model)`); resnet50(weights="DEFAULT") replaced by a
small conv net (conv, BatchNorm, ReLU, avgpool, fc) first trained a few steps on a pretext task, the "..." of
the docs filled with a cross-entropy training_step and Adam, 10 target classes on 8x8 images, 3 epochs of 8
batches (24 steps), CPU.
"""
# %%
import tempfile

import lightning as L
import torch
import torch.nn.functional as F
from lightning import LightningModule
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class SmallResNetLike(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(32)
        self.relu = nn.ReLU()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.avgpool(self.relu(self.bn1(self.conv1(x)))), 1))


torch.manual_seed(0)
images = torch.randn(128, 3, 8, 8)
labels = (images[:, 0].mean((1, 2)) * 6 + 5).clamp(0, 9).long()

# "pretraining" stand-in: a few steps on a pretext task
pretrained = SmallResNetLike(num_classes=4)
pre_opt = torch.optim.SGD(pretrained.parameters(), lr=0.1)
for _ in range(5):
    pre_opt.zero_grad()
    F.cross_entropy(pretrained(images), (images[:, 1].mean((1, 2)) > 0).long()).backward()
    pre_opt.step()


class ImagenetTransferLearning(LightningModule):
    def __init__(self):
        super().__init__()

        # init a pretrained resnet
        backbone = pretrained
        num_filters = backbone.fc.in_features
        layers = list(backbone.children())[:-1]
        self.feature_extractor = nn.Sequential(*layers)
        self.feature_extractor.eval()

        # use the pretrained model to classify cifar-10 (10 image classes)
        num_target_classes = 10
        self.classifier = nn.Linear(num_filters, num_target_classes)

    def forward(self, x):
        with torch.no_grad():
            representations = self.feature_extractor(x).flatten(1)
        x = self.classifier(representations)
        return x

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-2)


train_loader = DataLoader(TensorDataset(images, labels), batch_size=16, shuffle=True)
model = ImagenetTransferLearning()
# %%
trainer = L.Trainer(max_epochs=3, accelerator="cpu", devices=1, default_root_dir=tempfile.mkdtemp(), logger=False,
                    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, train_loader)
