"""SimCLR's InfoNCE / NT-Xent loss: two augmented views per image through one encoder + projection head,
features L2-normalised, the self-similarity diagonal masked out, positives and negatives gathered into logits
divided by a temperature, CrossEntropyLoss against index 0, under (disabled) autocast with a GradScaler.

source: https://github.com/sthalles/SimCLR/blob/master/simclr.py (info_nce_loss and train() kept, with
fp16_precision False as on CPU; the ResNet replaced by a small MLP with a projection head, STL10 and its
augmentations by 96 random vectors with two noisy/scaled views, batch 16, 5 epochs = 30 steps).
"""
# %%
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Args:
    batch_size = 16
    n_views = 2
    temperature = 0.07
    fp16_precision = False
    epochs = 5


class ResNetSimCLR(nn.Module):
    def __init__(self, in_dim=12, out_dim=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU(), nn.Linear(32, 32))
        dim_mlp = 32
        # add mlp projection head
        self.backbone = nn.Sequential(self.backbone, nn.ReLU(), nn.Linear(dim_mlp, dim_mlp), nn.ReLU(),
                                      nn.Linear(dim_mlp, out_dim))

    def forward(self, x):
        return self.backbone(x)


def augment(x):
    return x * (1 + 0.2 * torch.randn(x.size(0), 1)) + 0.1 * torch.randn_like(x)


class SimCLR(object):

    def __init__(self, *args, **kwargs):
        self.args = kwargs['args']
        self.model = kwargs['model']
        self.optimizer = kwargs['optimizer']
        self.scheduler = kwargs['scheduler']
        self.criterion = torch.nn.CrossEntropyLoss()

    def info_nce_loss(self, features):
        labels = torch.cat([torch.arange(self.args.batch_size) for i in range(self.args.n_views)], dim=0)
        labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()

        features = F.normalize(features, dim=1)

        similarity_matrix = torch.matmul(features, features.T)

        # discard the main diagonal from both: labels and similarities matrix
        mask = torch.eye(labels.shape[0], dtype=torch.bool)
        labels = labels[~mask].view(labels.shape[0], -1)
        similarity_matrix = similarity_matrix[~mask].view(similarity_matrix.shape[0], -1)

        # select and combine multiple positives
        positives = similarity_matrix[labels.bool()].view(labels.shape[0], -1)

        # select only the negatives the negatives
        negatives = similarity_matrix[~labels.bool()].view(similarity_matrix.shape[0], -1)

        logits = torch.cat([positives, negatives], dim=1)
        labels = torch.zeros(logits.shape[0], dtype=torch.long)

        logits = logits / self.args.temperature
        return logits, labels

    def train(self, train_loader):
        scaler = torch.amp.GradScaler("cuda", enabled=self.args.fp16_precision)
        n_iter = 0
        for epoch_counter in range(self.args.epochs):
            for images, _ in train_loader:
                images = torch.cat(images, dim=0)

                with torch.autocast("cpu", enabled=self.args.fp16_precision):
                    features = self.model(images)
                    logits, labels = self.info_nce_loss(features)
                    loss = self.criterion(logits, labels)

                self.optimizer.zero_grad()

                scaler.scale(loss).backward()

                scaler.step(self.optimizer)
                scaler.update()

                n_iter += 1

            # warmup for the first 10 epochs
            if epoch_counter >= 10:
                self.scheduler.step()


data = torch.randn(96, 12)
train_loader = [([augment(data[i:i + 16]), augment(data[i:i + 16])], None) for i in range(0, 96, 16)]
args = Args()
model = ResNetSimCLR()
optimizer = torch.optim.Adam(model.parameters(), 3e-4, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=len(train_loader), eta_min=0, last_epoch=-1)
# %%
simclr = SimCLR(model=model, optimizer=optimizer, scheduler=scheduler, args=args)
simclr.train(train_loader)
