"""Cross-entropy with label smoothing (CrossEntropyLoss(label_smoothing=0.1)) as in the torchvision classification
reference recipe.

source: https://github.com/pytorch/vision/blob/main/references/classification/train.py (`criterion =
nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)` and train_one_epoch's step); a tiny conv net,
random images, 30 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(8, 6))
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
images, targets = torch.randn(40, 3, 8, 8), torch.randint(0, 6, (40,))
# %%
model.train()
for i in range(30):
    j = (i * 8) % 40
    image, target = images[j:j + 8], targets[j:j + 8]
    output = model(image)
    loss = criterion(output, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
