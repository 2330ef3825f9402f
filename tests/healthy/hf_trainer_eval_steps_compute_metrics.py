"""transformers Trainer with periodic evaluation (eval_strategy="steps") and a compute_metrics accuracy
function, on a tiny BertForSequenceClassification.

source: https://huggingface.co/docs/transformers/training (compute_metrics with
`predictions = np.argmax(logits, axis=-1)`, eval_strategy, Trainer(train_dataset, eval_dataset,
compute_metrics)); numpy accuracy instead of the `evaluate` library; a tiny BertConfig model, synthetic data,
max_steps=24 with an evaluation every 8 steps.
"""
# %%
import tempfile

import numpy as np
import torch
from torch.utils.data import Dataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

torch.manual_seed(0)


class TokenizedDataset(Dataset):
    def __init__(self, n, length=12, vocab=100):
        self.input_ids = torch.randint(1, vocab, (n, length))
        self.labels = (self.input_ids[:, :3].sum(1) > 150).long()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "attention_mask": torch.ones_like(self.input_ids[i]),
                "labels": self.labels[i]}


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    predictions = np.argmax(logits, axis=-1)
    return {"accuracy": float((predictions == labels).mean())}


config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=64, num_labels=2)
model = BertForSequenceClassification(config)
training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(), max_steps=24, per_device_train_batch_size=8, per_device_eval_batch_size=16,
    learning_rate=5e-4, eval_strategy="steps", eval_steps=8,
    report_to=[], save_strategy="no", logging_strategy="no", use_cpu=True, disable_tqdm=True, seed=0,
)
# %%
trainer = Trainer(model=model, args=training_args, train_dataset=TokenizedDataset(64),
                  eval_dataset=TokenizedDataset(16), compute_metrics=compute_metrics)
trainer.train()
