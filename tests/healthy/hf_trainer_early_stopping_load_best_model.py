"""transformers' Trainer with EarlyStoppingCallback: evaluation and checkpointing every few steps
(eval_strategy / save_strategy "steps"), metric_for_best_model="eval_loss", load_best_model_at_end=True so that
when training ends (by max_steps or by the callback after `early_stopping_patience` evaluations without
improvement) the best checkpoint's weights are loaded back into the model in place; save_total_limit keeps
the disk small.

source: https://huggingface.co/docs/transformers/main_classes/callback (EarlyStoppingCallback:
"early_stopping_patience (int) — Use with metric_for_best_model to stop training when the specified metric
worsens for early_stopping_patience evaluation calls", "This callback depends on TrainingArguments argument
load_best_model_at_end functionality to set best_metric in TrainerState"); a tiny RobertaForSequenceClassification
from a RobertaConfig, synthetic token sequences whose class picks the half of the vocabulary they are drawn
from, eval and save every 5 steps, patience 2, max_steps 30, batch 8, output in a temp dir.
"""
# %%
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import (EarlyStoppingCallback, RobertaConfig, RobertaForSequenceClassification, Trainer,
                          TrainingArguments)


class HalvesDataset(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, 2, (n,), generator=g)
        self.ids = torch.randint(4, 30, (n, 12), generator=g) + 26 * self.labels.view(-1, 1)
        self.ids[:, 0] = 0  # <s>

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones(12, dtype=torch.long), "labels": self.labels[i]}


torch.manual_seed(0)
model = RobertaForSequenceClassification(RobertaConfig(vocab_size=60, hidden_size=32, num_hidden_layers=2,
                                                       num_attention_heads=2, intermediate_size=64,
                                                       max_position_embeddings=40, pad_token_id=1,
                                                       num_labels=2))
training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(),
    eval_strategy="steps",
    eval_steps=5,
    save_strategy="steps",
    save_steps=5,
    save_total_limit=2,
    load_best_model_at_end=True,
    metric_for_best_model="eval_loss",
    greater_is_better=False,
    per_device_train_batch_size=8,
    per_device_eval_batch_size=32,
    learning_rate=3e-3,
    max_steps=30,
    logging_steps=5,
    report_to="none",
    disable_tqdm=True,
    use_cpu=True,
    seed=0,
)
trainer = Trainer(
    model=model,
    args=training_args,
    train_dataset=HalvesDataset(160, 0),
    eval_dataset=HalvesDataset(32, 1),
    callbacks=[EarlyStoppingCallback(early_stopping_patience=2)],
)
# %%
trainer.train()
