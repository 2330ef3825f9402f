"""A Trainer subclass overriding compute_loss with a class-weighted cross-entropy (the documented way to use a
custom loss), on a tiny BertForSequenceClassification.

source: https://huggingface.co/docs/transformers/main_classes/trainer (the CustomTrainer example:
`labels = inputs.pop("labels")`, `outputs = model(**inputs)`, `nn.CrossEntropyLoss(weight=...)`,
`return (loss, outputs) if return_outputs else loss`); a tiny BertConfig model, synthetic data, max_steps=25.
"""
# %%
import tempfile

import torch
from torch import nn
from torch.utils.data import Dataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

torch.manual_seed(0)


class ImbalancedDataset(Dataset):
    def __init__(self, n=64, length=12, vocab=100):
        self.input_ids = torch.randint(1, vocab, (n, length))
        self.labels = torch.multinomial(torch.tensor([0.6, 0.3, 0.1]), n, replacement=True)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "attention_mask": torch.ones_like(self.input_ids[i]),
                "labels": self.labels[i]}


class CustomTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        # forward pass
        outputs = model(**inputs)
        logits = outputs.get("logits")
        # compute custom loss (suppose one has 3 labels with different weights)
        loss_fct = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 3.0], device=model.device))
        loss = loss_fct(logits.view(-1, self.model.config.num_labels), labels.view(-1))
        return (loss, outputs) if return_outputs else loss


config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=64, num_labels=3)
model = BertForSequenceClassification(config)
training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(), max_steps=25, per_device_train_batch_size=8, learning_rate=5e-4,
    report_to=[], save_strategy="no", logging_strategy="no", use_cpu=True, disable_tqdm=True, seed=0,
)
# %%
trainer = CustomTrainer(model=model, args=training_args, train_dataset=ImbalancedDataset())
trainer.train()
