"""accelerate with gradient clipping: accelerator.backward(loss), then `if accelerator.sync_gradients:
accelerator.clip_grad_norm_(model.parameters(), max_grad_norm)` before optimizer.step().

source: https://huggingface.co/docs/accelerate/usage_guides/gradient_accumulation and
https://huggingface.co/docs/accelerate/package_reference/accelerator (clip_grad_norm_: "Should be used in place
of torch.nn.utils.clip_grad_norm_", with the `if accelerator.sync_gradients:` guard of the accelerate
examples); a small Conv1d model on synthetic signals, CPU, 25 steps.
"""
# %%
import torch
from accelerate import Accelerator
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
accelerator = Accelerator(cpu=True)
model = nn.Sequential(nn.Conv1d(2, 8, 5, padding=2), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(),
                      nn.Linear(8, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
signals = torch.randn(200, 2, 32)
labels = torch.randint(0, 3, (200,))
dataloader = DataLoader(TensorDataset(signals, labels), batch_size=8)
loss_func = nn.CrossEntropyLoss()
max_grad_norm = 1.0
model, optimizer, dataloader = accelerator.prepare(model, optimizer, dataloader)
# %%
model.train()
for input, target in dataloader:
    optimizer.zero_grad()
    output = model(input)
    loss = loss_func(output, target)
    accelerator.backward(loss)
    if accelerator.sync_gradients:
        accelerator.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
