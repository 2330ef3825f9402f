"""Training only the classification head of a BertForSequenceClassification: every parameter of `model.bert`
gets requires_grad = False (so the encoder still runs in train mode, dropout on, but builds no graph for its
weights), the optimizer is given all of model.parameters() anyway, and a plain loop with
`outputs = model(**batch)`, outputs.loss, backward, step, zero_grad trains the classifier.

source: https://github.com/huggingface/transformers/issues/400 ("how to freeze bert model and just train a
classifier?": thomwolf's answer `for param in model.bert.parameters(): param.requires_grad = False`, after
which only the classification layer keeps requires_grad=True); BertForSequenceClassification.from_pretrained
('bert-base-uncased') replaced by a tiny BertConfig model (a random encoder with initializer_range 0.2
standing in for pretrained features, whose pooled output would otherwise be near-constant), synthetic token
sequences drawn from one half of the vocabulary per class, AdamW lr 3e-2, 3 epochs of 8 batches.
"""
# %%
import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import BertConfig, BertForSequenceClassification

torch.manual_seed(0)
model = BertForSequenceClassification(BertConfig(vocab_size=60, hidden_size=32, num_hidden_layers=2,
                                                 num_attention_heads=2, intermediate_size=64,
                                                 max_position_embeddings=32, num_labels=2,
                                                 initializer_range=0.2))

for param in model.bert.parameters():
    param.requires_grad = False

labels = torch.randint(0, 2, (128,))
input_ids = torch.randint(10, 35, (128, 12)) + 25 * labels.view(-1, 1)  # each class its own half of the vocab
input_ids[:, 0] = 1
train_dataloader = DataLoader(TensorDataset(input_ids, labels), batch_size=16, shuffle=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-2)
# %%
model.train()
for epoch in range(3):
    for ids, y in train_dataloader:
        batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": y}
        outputs = model(**batch)
        loss = outputs.loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
