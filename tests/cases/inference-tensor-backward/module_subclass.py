%%gradcheck
# A preprocessing function decorated with inference_mode feeds a small model
import torch
import torch.nn as nn


@torch.inference_mode()
def normalise(batch):
    return (batch - batch.mean(0)) / (batch.std(0) + 1e-6)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x)


torch.manual_seed(0)
model = Regressor()
inputs = normalise(torch.randn(10, 4))
loss = model(inputs).pow(2).mean()
loss.backward()
