"""The transfer-learning tutorial's "ConvNet as fixed feature extractor": every backbone parameter gets
requires_grad = False, a new fc is trained; train_model() runs 'train' and 'val' phases under
torch.set_grad_enabled(phase == 'train'), keeps the best weights with copy.deepcopy, StepLR per epoch.

source: https://pytorch.org/tutorials/beginner/transfer_learning_tutorial.html (train_model and the
fixed-feature-extractor setup kept; a tiny random CNN stands in for the pretrained ResNet-18, random images
for hymenoptera, 4 epochs of 6 train batches).
"""
# %%
import copy

import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim import lr_scheduler

torch.manual_seed(0)


class TinyBackbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(8, 1000)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


def make_loader(n):
    return [(torch.randn(4, 3, 8, 8), torch.randint(0, 2, (4,))) for _ in range(n)]


dataloaders = {'train': make_loader(6), 'val': make_loader(2)}
dataset_sizes = {x: 4 * len(dataloaders[x]) for x in ['train', 'val']}


def train_model(model, criterion, optimizer, scheduler, num_epochs=25):
    best_model_wts = copy.deepcopy(model.state_dict())
    best_acc = 0.0
    for epoch in range(num_epochs):
        # Each epoch has a training and validation phase
        for phase in ['train', 'val']:
            if phase == 'train':
                model.train()  # Set model to training mode
            else:
                model.eval()   # Set model to evaluate mode
            running_loss = 0.0
            running_corrects = 0
            for inputs, labels in dataloaders[phase]:
                # zero the parameter gradients
                optimizer.zero_grad()
                # forward; track history if only in train
                with torch.set_grad_enabled(phase == 'train'):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    # backward + optimize only if in training phase
                    if phase == 'train':
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)
            if phase == 'train':
                scheduler.step()
            epoch_loss = running_loss / dataset_sizes[phase]
            epoch_acc = running_corrects.double() / dataset_sizes[phase]
            if phase == 'val' and epoch_acc > best_acc:
                best_acc = epoch_acc
                best_model_wts = copy.deepcopy(model.state_dict())
    model.load_state_dict(best_model_wts)
    return model


model_conv = TinyBackbone()
for param in model_conv.parameters():
    param.requires_grad = False
# Parameters of newly constructed modules have requires_grad=True by default
num_ftrs = model_conv.fc.in_features
model_conv.fc = nn.Linear(num_ftrs, 2)
criterion = nn.CrossEntropyLoss()
# Observe that only parameters of final layer are being optimized as opposed to before.
optimizer_conv = optim.SGD(model_conv.fc.parameters(), lr=0.001, momentum=0.9)
# Decay LR by a factor of 0.1 every 7 epochs
exp_lr_scheduler = lr_scheduler.StepLR(optimizer_conv, step_size=7, gamma=0.1)
# %%
model_conv = train_model(model_conv, criterion, optimizer_conv, exp_lr_scheduler, num_epochs=4)
