"""Gradient accumulation: step every 4 micro-batches, clear right after the step.

source: https://huggingface.co/docs/accelerate/usage_guides/gradient_accumulation (the plain-PyTorch loop it
starts from: `loss = loss / gradient_accumulation_steps`, step and zero_grad when `(index+1) % steps == 0`);
40 micro-batches.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(8, 2)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
loss_function = nn.CrossEntropyLoss()
gradient_accumulation_steps = 4
batches = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(40)]
# %%
for index, (inputs, targets) in enumerate(batches):
    outputs = model(inputs)
    loss = loss_function(outputs, targets)
    loss = loss / gradient_accumulation_steps
    loss.backward()
    if (index + 1) % gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
