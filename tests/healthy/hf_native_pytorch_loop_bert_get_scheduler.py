"""The "train in native PyTorch" loop of the transformers docs: a DataLoader of tokenized dicts, AdamW,
get_scheduler("linear"), `outputs = model(**batch); loss = outputs.loss; loss.backward()`.

source: https://huggingface.co/docs/transformers/training (the native PyTorch section: `optimizer =
AdamW(model.parameters(), lr=5e-5)`, `lr_scheduler = get_scheduler(name="linear", ...)`, the loop with
`batch = {k: v.to(device) for k, v in batch.items()}`, step, lr_scheduler.step, zero_grad); a tiny BertConfig
model instead of from_pretrained, no progress bar, 3 epochs of 8 batches.
"""
# %%
import torch
from torch.optim import AdamW
from torch.utils.data import DataLoader, Dataset
from transformers import BertConfig, BertForSequenceClassification, get_scheduler

torch.manual_seed(0)


class TokenizedDataset(Dataset):
    def __init__(self, n=64, length=12, vocab=100):
        self.input_ids = torch.randint(1, vocab, (n, length))
        self.labels = torch.randint(0, 5, (n,))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "token_type_ids": torch.zeros_like(self.input_ids[i]),
                "attention_mask": torch.ones_like(self.input_ids[i]), "labels": self.labels[i]}


train_dataloader = DataLoader(TokenizedDataset(), shuffle=True, batch_size=8)
config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=64, num_labels=5)
model = BertForSequenceClassification(config)
optimizer = AdamW(model.parameters(), lr=5e-4)
num_epochs = 3
num_training_steps = num_epochs * len(train_dataloader)
lr_scheduler = get_scheduler(name="linear", optimizer=optimizer, num_warmup_steps=0,
                             num_training_steps=num_training_steps)
device = torch.device("cpu")
model.to(device)
# %%
model.train()
for epoch in range(num_epochs):
    for batch in train_dataloader:
        batch = {k: v.to(device) for k, v in batch.items()}
        outputs = model(**batch)
        loss = outputs.loss
        loss.backward()

        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
