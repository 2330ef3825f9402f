"""transformers Trainer with a tight max_grad_norm, a polynomial LR schedule with a warmup ratio and weight decay,
fine-tuning a tiny BertForSequenceClassification.

source: https://huggingface.co/docs/transformers/main_classes/trainer (TrainingArguments max_grad_norm,
lr_scheduler_type="polynomial", a float warmup_steps (a ratio), weight_decay); a tiny BertConfig model instead of
from_pretrained, a synthetic Dataset of dicts, max_steps=25.
"""
# %%
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

torch.manual_seed(0)


class PairsDataset(Dataset):
    """Sentence pairs: token_type_ids mark the second segment."""

    def __init__(self, n=64, length=12, vocab=100):
        self.input_ids = torch.randint(1, vocab, (n, length))
        self.token_type_ids = torch.cat([torch.zeros(n, length // 2), torch.ones(n, length // 2)], 1).long()
        self.labels = torch.randint(0, 2, (n,))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "token_type_ids": self.token_type_ids[i],
                "attention_mask": torch.ones_like(self.input_ids[i]), "labels": self.labels[i]}


config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=64, num_labels=2)
model = BertForSequenceClassification(config)
training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(), max_steps=25, per_device_train_batch_size=8, learning_rate=5e-4,
    max_grad_norm=0.5, lr_scheduler_type="polynomial", warmup_steps=0.1, weight_decay=0.01,
    report_to=[], save_strategy="no", logging_strategy="no", use_cpu=True, disable_tqdm=True, seed=0,
)
# %%
trainer = Trainer(model=model, args=training_args, train_dataset=PairsDataset())
trainer.train()
