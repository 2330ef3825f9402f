"""transformers Trainer fine-tuning a DistilBertForSequenceClassification with gradient_accumulation_steps=2.

source: https://huggingface.co/docs/transformers/main_classes/trainer (TrainingArguments
gradient_accumulation_steps) and https://huggingface.co/docs/transformers/tasks/sequence_classification
(DistilBERT with Trainer); a tiny DistilBertConfig model, a synthetic Dataset of dicts, 20 optimizer steps
over 40 micro-batches.
"""
# %%
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import DistilBertConfig, DistilBertForSequenceClassification, Trainer, TrainingArguments

torch.manual_seed(0)


class ReviewsDataset(Dataset):
    def __init__(self, n=80, length=10, vocab=100):
        self.input_ids = torch.randint(1, vocab, (n, length))
        self.labels = (self.input_ids[:, 0] > vocab // 2).long()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "attention_mask": torch.ones_like(self.input_ids[i]),
                "labels": self.labels[i]}


config = DistilBertConfig(vocab_size=100, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                          max_position_embeddings=64, num_labels=2)
model = DistilBertForSequenceClassification(config)
training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(), max_steps=20, per_device_train_batch_size=4, gradient_accumulation_steps=2,
    learning_rate=2e-4, weight_decay=0.01,
    report_to=[], save_strategy="no", logging_strategy="no", use_cpu=True, disable_tqdm=True, seed=0,
)
# %%
trainer = Trainer(model=model, args=training_args, train_dataset=ReviewsDataset())
trainer.train()
