"""A linear probe: features from a frozen encoder computed under torch.no_grad() (encoder in eval mode), a
linear classifier trained on them.

source: https://github.com/facebookresearch/moco/blob/main/main_lincls.py (linear classification on frozen
features) as the pattern `with torch.no_grad(): feats = encoder(x)` then `logits = classifier(feats)`; a tiny
random CNN encoder, random 3x8x8 images, 30 SGD steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten())
encoder.eval()
classifier = nn.Linear(8, 5)
classifier.weight.data.normal_(mean=0.0, std=0.01)
classifier.bias.data.zero_()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(classifier.parameters(), lr=0.5, momentum=0.9, weight_decay=0.)
images_all, target_all = torch.randn(40, 3, 8, 8), torch.randint(0, 5, (40,))
# %%
for step in range(30):
    i = (step * 8) % 40
    images, target = images_all[i:i + 8], target_all[i:i + 8]
    with torch.no_grad():
        feats = encoder(images)
    output = classifier(feats)
    loss = criterion(output, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
