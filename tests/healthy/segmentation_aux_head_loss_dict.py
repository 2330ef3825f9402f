"""torchvision's segmentation reference recipe: the model returns an OrderedDict {'out', 'aux'}, the criterion
loops over it building a dict of cross-entropies (ignore_index=255) and returns out + 0.5 * aux, SGD with
momentum and a polynomial LambdaLR stepped every iteration.

source: https://github.com/pytorch/vision/blob/main/references/segmentation/train.py (criterion,
train_one_epoch and the optimizer / lr-scheduler setup kept; FCN-ResNet50 replaced by a 3-conv net with an
auxiliary head on its middle features, COCO by 40 random 3x8x8 images with some 255-ignored pixels,
3 epochs of 10 batches = 30 steps; MetricLogger dropped).
"""
# %%
from collections import OrderedDict

import torch
import torch.nn as nn

torch.manual_seed(0)
num_classes = 4


class TinyFCN(nn.Module):
    def __init__(self, num_classes, aux_loss=True):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1),
                                      nn.ReLU())
        self.classifier = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, num_classes, 1))
        self.aux_classifier = nn.Conv2d(8, num_classes, 1) if aux_loss else None

    def forward(self, x):
        features = self.backbone(x)
        result = OrderedDict()
        result["out"] = self.classifier(features)
        if self.aux_classifier is not None:
            result["aux"] = self.aux_classifier(features)
        return result


def criterion(inputs, target):
    losses = {}
    for name, x in inputs.items():
        losses[name] = nn.functional.cross_entropy(x, target, ignore_index=255)

    if len(losses) == 1:
        return losses["out"]

    return losses["out"] + 0.5 * losses["aux"]


images = torch.randn(40, 3, 8, 8)
targets = torch.randint(0, num_classes, (40, 8, 8))
targets[torch.rand(40, 8, 8) < 0.1] = 255
data_loader = [(images[i:i + 4], targets[i:i + 4]) for i in range(0, 40, 4)]

model = TinyFCN(num_classes, aux_loss=True)
params_to_optimize = [
    {"params": [p for p in model.backbone.parameters() if p.requires_grad]},
    {"params": [p for p in model.classifier.parameters() if p.requires_grad]},
]
params = [p for p in model.aux_classifier.parameters() if p.requires_grad]
params_to_optimize.append({"params": params, "lr": 0.02 * 10})
optimizer = torch.optim.SGD(params_to_optimize, lr=0.02, momentum=0.9, weight_decay=1e-4)
epochs = 3
iters_per_epoch = len(data_loader)
lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
    optimizer, lambda x: (1 - x / (iters_per_epoch * epochs)) ** 0.9)
# %%
def train_one_epoch(model, criterion, optimizer, data_loader, lr_scheduler):
    model.train()
    losses = []
    for image, target in data_loader:
        output = model(image)
        loss = criterion(output, target)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        lr_scheduler.step()
        losses.append(loss.item())
    return sum(losses) / len(losses)


for epoch in range(epochs):
    train_one_epoch(model, criterion, optimizer, data_loader, lr_scheduler)
