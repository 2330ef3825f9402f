"""Fine-tuning only the head: backbone.requires_grad_(False), the optimizer built over the parameters that
still require grad (filter(lambda p: p.requires_grad, ...)), AdamW.

source: https://pytorch.org/tutorials/beginner/finetuning_torchvision_models_tutorial.html (set_parameter_
requires_grad and "params_to_update = [p for p in model.parameters() if p.requires_grad]"), with
Module.requires_grad_ (https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.requires_grad_);
a tiny random backbone, 30 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, n_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.Linear(32, 16), nn.GELU())
        self.head = nn.Linear(16, n_classes)

    def forward(self, x):
        return self.head(self.backbone(x))


model = Classifier()
model.backbone.requires_grad_(False)
params_to_update = filter(lambda p: p.requires_grad, model.parameters())
optimizer = torch.optim.AdamW(params_to_update, lr=1e-2)
criterion = nn.CrossEntropyLoss()
X, Y = torch.randn(40, 12), torch.randint(0, 3, (40,))
# %%
model.train()
for step in range(30):
    i = (step * 8) % 40
    optimizer.zero_grad()
    loss = criterion(model(X[i:i + 8]), Y[i:i + 8])
    loss.backward()
    optimizer.step()
