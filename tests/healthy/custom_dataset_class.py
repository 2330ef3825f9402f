"""A custom Dataset subclass (__len__, __getitem__ with a transform) wrapped in a DataLoader, as in the data
tutorial.

source: https://pytorch.org/tutorials/beginner/basics/data_tutorial.html (CustomImageDataset: __init__,
__len__, __getitem__ applying transform/target_transform; here the "images" are generated in memory, not read
from files) and the quickstart train loop; 4 epochs of 8 batches.
"""
# %%
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


class CustomImageDataset(Dataset):
    def __init__(self, n, transform=None, target_transform=None):
        self.images = torch.randint(0, 256, (n, 1, 6, 6), dtype=torch.uint8)
        self.img_labels = torch.randint(0, 3, (n,)).tolist()
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.img_labels)

    def __getitem__(self, idx):
        image = self.images[idx]
        label = self.img_labels[idx]
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label


training_data = CustomImageDataset(32, transform=lambda img: img.float() / 255.0)
train_dataloader = DataLoader(training_data, batch_size=4, shuffle=True, num_workers=0)
model = nn.Sequential(nn.Flatten(), nn.Linear(36, 16), nn.ReLU(), nn.Linear(16, 3))
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
# %%
model.train()
for epoch in range(4):
    for batch, (X, y) in enumerate(train_dataloader):
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
