"""transformers Trainer given its own (optimizer, scheduler) pair through `optimizers=`: AdamW over parameter
groups without weight decay on biases and LayerNorm, and get_cosine_schedule_with_warmup.

source: https://huggingface.co/docs/transformers/main_classes/trainer (Trainer's `optimizers` argument: "A
tuple containing the optimizer and the scheduler to use") and the no_decay parameter groups of
https://github.com/huggingface/transformers/blob/main/examples/pytorch/text-classification/run_glue_no_trainer.py;
a tiny BertConfig model, synthetic data, max_steps=25.
"""
# %%
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import (BertConfig, BertForSequenceClassification, Trainer, TrainingArguments,
                          get_cosine_schedule_with_warmup)

torch.manual_seed(0)


class TokenizedDataset(Dataset):
    def __init__(self, n=64, length=12, vocab=100):
        self.input_ids = torch.randint(1, vocab, (n, length))
        self.labels = torch.randint(0, 2, (n,))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "attention_mask": torch.ones_like(self.input_ids[i]),
                "labels": self.labels[i]}


config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=64, num_labels=2)
model = BertForSequenceClassification(config)
no_decay = ["bias", "LayerNorm.weight"]
optimizer_grouped_parameters = [
    {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
     "weight_decay": 0.01},
    {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
     "weight_decay": 0.0},
]
optimizer = torch.optim.AdamW(optimizer_grouped_parameters, lr=5e-4)
lr_scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=3, num_training_steps=25)
training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(), max_steps=25, per_device_train_batch_size=8,
    report_to=[], save_strategy="no", logging_strategy="no", use_cpu=True, disable_tqdm=True, seed=0,
)
# %%
trainer = Trainer(model=model, args=training_args, train_dataset=TokenizedDataset(),
                  optimizers=(optimizer, lr_scheduler))
trainer.train()
