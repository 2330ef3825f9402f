"""transformers Trainer fine-tuning a BertForSequenceClassification on a Dataset of dicts.

source: https://huggingface.co/docs/transformers/training (the "Train with Trainer" section: TrainingArguments,
Trainer(model, args, train_dataset), trainer.train()); a tiny BERT built from a BertConfig instead of
from_pretrained, a synthetic tokenized dataset of dicts, max_steps=25, no logging or saving.
"""
# %%
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

torch.manual_seed(0)


class TokenizedDataset(Dataset):
    def __init__(self, n=64, length=12, vocab=100, num_labels=3):
        self.input_ids = torch.randint(1, vocab, (n, length))
        self.labels = torch.randint(0, num_labels, (n,))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "attention_mask": torch.ones_like(self.input_ids[i]),
                "labels": self.labels[i]}


config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=64, num_labels=3)
model = BertForSequenceClassification(config)
train_dataset = TokenizedDataset()
training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(), max_steps=25, per_device_train_batch_size=8, learning_rate=5e-4,
    report_to=[], save_strategy="no", logging_strategy="no", use_cpu=True, disable_tqdm=True, seed=0,
)
# %%
trainer = Trainer(model=model, args=training_args, train_dataset=train_dataset)
trainer.train()
