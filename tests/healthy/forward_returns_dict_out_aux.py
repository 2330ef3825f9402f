"""A segmentation model whose forward returns a dict of outputs ({"out": ..., "aux": ...}, as torchvision's
FCN/DeepLabV3 do) and the torchvision reference criterion that sums the losses of the dict's entries
(`losses["out"] + 0.5 * losses["aux"]`).

source: https://github.com/pytorch/vision/blob/main/references/segmentation/train.py (criterion: `for name, x
in inputs.items(): losses[name] = nn.functional.cross_entropy(x, target, ignore_index=255)`; train_one_epoch:
`output = model(image)`, `loss = criterion(output, target)`, zero_grad, backward, step, lr_scheduler.step())
and torchvision's _SimpleSegmentationModel forward (OrderedDict result with "out" and "aux"); a tiny conv
backbone, 16x16 synthetic masks with ignore pixels, SGD + PolynomialLR, 25 steps.
"""
# %%
from collections import OrderedDict

import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


class TinySegmentation(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.layer2 = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.classifier = nn.Conv2d(16, num_classes, 1)
        self.aux_classifier = nn.Conv2d(8, num_classes, 1)

    def forward(self, x):
        input_shape = x.shape[-2:]
        aux_features = self.layer1(x)
        features = self.layer2(aux_features)
        result = OrderedDict()
        x = self.classifier(features)
        x = F.interpolate(x, size=input_shape, mode="bilinear", align_corners=False)
        result["out"] = x
        x = self.aux_classifier(aux_features)
        x = F.interpolate(x, size=input_shape, mode="bilinear", align_corners=False)
        result["aux"] = x
        return result


def criterion(inputs, target):
    losses = {}
    for name, x in inputs.items():
        losses[name] = nn.functional.cross_entropy(x, target, ignore_index=255)
    if len(losses) == 1:
        return losses["out"]
    return losses["out"] + 0.5 * losses["aux"]


model = TinySegmentation()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
lr_scheduler = torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=25, power=0.9)
data_loader = []
for _ in range(25):
    image = torch.randn(4, 3, 16, 16)
    target = (image[:, 0] > 0).long() + (image[:, 1] > 0.5).long()
    target[:, :, :2] = 255  # ignored border
    data_loader.append((image, target))
# %%
model.train()
for image, target in data_loader:
    output = model(image)
    loss = criterion(output, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    lr_scheduler.step()
