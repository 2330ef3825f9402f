"""accelerate's computer-vision example: the whole pretrained model frozen (`param.requires_grad = False`), then
only `model.get_classifier()` unfrozen, while Adam still receives all of model.parameters(); OneCycleLR
stepped every batch; batches are dicts normalised by the model's default_cfg mean/std; an eval pass per epoch
under model.eval() / torch.no_grad() with accelerator.gather_for_metrics. Here with Accelerator(cpu=True,
mixed_precision="bf16"), so the prepared model's forward runs under CPU bfloat16 autocast.

source: https://github.com/huggingface/accelerate/blob/main/examples/cv_example.py (training_function: the
freezing, the normalisation, the optimizer, OneCycleLR, accelerator.prepare, the train and eval loops kept as
written); timm's create_model("resnet50d", pretrained=True) replaced by a small conv net with the same
get_classifier() / default_cfg interface, the Oxford pets folder by 8x8 synthetic images in a Dataset of
dicts, lr 3e-2, 3 epochs of 8 batches, `--cpu --mixed_precision bf16`.
"""
# %%
import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch import nn
from torch.optim.lr_scheduler import OneCycleLR
from torch.utils.data import DataLoader, Dataset


class TinyTimmLikeNet(nn.Module):
    default_cfg = {"mean": (0.485, 0.456, 0.406), "std": (0.229, 0.224, 0.225)}

    def __init__(self, num_classes):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.global_pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(16, num_classes)

    def get_classifier(self):
        return self.fc

    def forward(self, x):
        return self.fc(self.global_pool(self.stem(x)))


class PetsDataset(Dataset):
    def __init__(self, images, labels):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        return {"image": self.images[idx], "label": self.labels[idx]}


config = {"lr": 3e-2, "num_epochs": 3, "seed": 42, "batch_size": 16, "image_size": 8}
accelerator = Accelerator(cpu=True, mixed_precision="bf16")
lr = config["lr"]
num_epochs = int(config["num_epochs"])
seed = int(config["seed"])
batch_size = int(config["batch_size"])
set_seed(seed)

labels = torch.randint(0, 4, (160,))
images = torch.rand(160, 3, 8, 8) * 0.5
images[torch.arange(160), labels % 3] += 0.2 * labels.view(-1, 1, 1).float()
train_dataset = PetsDataset(images[:128], labels[:128])
eval_dataset = PetsDataset(images[128:], labels[128:])
train_dataloader = DataLoader(train_dataset, shuffle=True, batch_size=batch_size)
eval_dataloader = DataLoader(eval_dataset, shuffle=False, batch_size=batch_size)

model = TinyTimmLikeNet(num_classes=4)
# "pretrained" stand-in: the stem was trained elsewhere; here it only gets its BatchNorm statistics
with torch.no_grad():
    model.stem(images)
model = model.to(accelerator.device)

# Freezing the base model
for param in model.parameters():
    param.requires_grad = False
for param in model.get_classifier().parameters():
    param.requires_grad = True

# We normalize the batches of images to be a bit faster.
mean = torch.tensor(model.default_cfg["mean"])[None, :, None, None].to(accelerator.device)
std = torch.tensor(model.default_cfg["std"])[None, :, None, None].to(accelerator.device)

# Instantiate optimizer
optimizer = torch.optim.Adam(params=model.parameters(), lr=lr / 25)

# Instantiate learning rate scheduler
lr_scheduler = OneCycleLR(optimizer=optimizer, max_lr=lr, epochs=num_epochs, steps_per_epoch=len(train_dataloader))

model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler
)
# %%
for epoch in range(num_epochs):
    model.train()
    for step, batch in enumerate(train_dataloader):
        batch = {k: v.to(accelerator.device) for k, v in batch.items()}
        inputs = (batch["image"] - mean) / std
        outputs = model(inputs)
        loss = torch.nn.functional.cross_entropy(outputs, batch["label"])
        accelerator.backward(loss)
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()

    model.eval()
    accurate = 0
    num_elems = 0
    for _, batch in enumerate(eval_dataloader):
        batch = {k: v.to(accelerator.device) for k, v in batch.items()}
        inputs = (batch["image"] - mean) / std
        with torch.no_grad():
            outputs = model(inputs)
        predictions = outputs.argmax(dim=-1)
        predictions, references = accelerator.gather_for_metrics((predictions, batch["label"]))
        accurate_preds = predictions == references
        num_elems += accurate_preds.shape[0]
        accurate += accurate_preds.long().sum()

    eval_metric = accurate.item() / num_elems
accelerator.end_training()
