"""AdamW with two parameter groups: weight decay on weights, none on biases and LayerNorm weights.

source: https://github.com/huggingface/transformers/blob/v4.30.0/examples/pytorch/text-classification/run_glue_no_trainer.py
(`no_decay = ["bias", "LayerNorm.weight"]`, optimizer_grouped_parameters, AdamW); a tiny MLP with a LayerNorm,
random data, 30 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(8, 16)
        self.LayerNorm = nn.LayerNorm(16)
        self.classifier = nn.Linear(16, 2)

    def forward(self, x):
        return self.classifier(self.LayerNorm(torch.relu(self.dense(x))))


model = Block()
no_decay = ["bias", "LayerNorm.weight"]
optimizer_grouped_parameters = [
    {
        "params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
        "weight_decay": 0.01,
    },
    {
        "params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
        "weight_decay": 0.0,
    },
]
optimizer = torch.optim.AdamW(optimizer_grouped_parameters, lr=5e-3)
X, Y = torch.randn(40, 8), torch.randint(0, 2, (40,))
# %%
model.train()
for step in range(30):
    i = (step * 8) % 40
    outputs = model(X[i:i + 8])
    loss = nn.functional.cross_entropy(outputs, Y[i:i + 8])
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
