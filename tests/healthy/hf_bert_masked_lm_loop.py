"""Masked-language-model pre-training of a tiny BertForMaskedLM by hand: 15% of the tokens picked, 80% of
those replaced by [MASK], 10% by a random token, labels -100 on the rest; AdamW and a linear warmup schedule.

source: https://github.com/huggingface/transformers/blob/main/src/transformers/data/data_collator.py
(DataCollatorForLanguageModeling.torch_mask_tokens: the 80/10/10 masking with `labels[~masked_indices] = -100`)
and the loop of https://github.com/huggingface/transformers/blob/main/examples/pytorch/language-modeling/run_mlm_no_trainer.py
(`outputs = model(**batch)`, `loss = outputs.loss`, backward, step, lr_scheduler.step, zero_grad), without
accelerate; a tiny BertConfig model, 25 steps.
"""
# %%
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import BertConfig, BertForMaskedLM, get_linear_schedule_with_warmup

torch.manual_seed(0)
VOCAB, MASK_ID, SPECIAL = 100, 4, 5  # ids below SPECIAL are special tokens


def mask_tokens(inputs, mlm_probability=0.15):
    labels = inputs.clone()
    probability_matrix = torch.full(labels.shape, mlm_probability)
    probability_matrix.masked_fill_(inputs < SPECIAL, value=0.0)
    masked_indices = torch.bernoulli(probability_matrix).bool()
    labels[~masked_indices] = -100  # We only compute loss on masked tokens
    indices_replaced = torch.bernoulli(torch.full(labels.shape, 0.8)).bool() & masked_indices
    inputs[indices_replaced] = MASK_ID
    indices_random = torch.bernoulli(torch.full(labels.shape, 0.5)).bool() & masked_indices & ~indices_replaced
    random_words = torch.randint(VOCAB, labels.shape, dtype=torch.long)
    inputs[indices_random] = random_words[indices_random]
    return inputs, labels


class TextDataset(Dataset):
    def __init__(self, n=100, length=16):
        self.ids = torch.randint(SPECIAL, VOCAB, (n, length))

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return self.ids[i]


def collate(examples):
    input_ids, labels = mask_tokens(torch.stack(examples).clone())
    return {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids), "labels": labels}


train_dataloader = DataLoader(TextDataset(), shuffle=True, batch_size=8, collate_fn=collate)
model = BertForMaskedLM(BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                   intermediate_size=64, max_position_embeddings=64))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
max_train_steps = 25
lr_scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=3, num_training_steps=max_train_steps)
# %%
completed_steps = 0
model.train()
while completed_steps < max_train_steps:
    for batch in train_dataloader:
        outputs = model(**batch)
        loss = outputs.loss
        loss.backward()
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        completed_steps += 1
        if completed_steps >= max_train_steps:
            break
