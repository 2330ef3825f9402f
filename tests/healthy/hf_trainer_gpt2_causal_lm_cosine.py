"""transformers Trainer training a GPT2LMHeadModel as a causal language model (labels = input_ids, the model
shifts them), with a cosine schedule and warmup.

source: https://huggingface.co/docs/transformers/tasks/language_modeling (Trainer on GPT-2-style models with
labels copied from input_ids) and https://huggingface.co/docs/transformers/main_classes/trainer
(lr_scheduler_type, warmup_steps); a tiny GPT2Config model instead of from_pretrained, synthetic token blocks,
max_steps=25.
"""
# %%
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

torch.manual_seed(0)


class BlockDataset(Dataset):
    """Token blocks as group_texts makes them: labels are a copy of input_ids."""

    def __init__(self, n=64, block_size=16, vocab=100):
        self.blocks = torch.randint(0, vocab, (n, block_size))

    def __len__(self):
        return len(self.blocks)

    def __getitem__(self, i):
        return {"input_ids": self.blocks[i], "labels": self.blocks[i].clone()}


config = GPT2Config(vocab_size=100, n_positions=64, n_embd=32, n_layer=2, n_head=2, bos_token_id=99, eos_token_id=99)
model = GPT2LMHeadModel(config)
training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(), max_steps=25, per_device_train_batch_size=8, learning_rate=1e-3,
    lr_scheduler_type="cosine", warmup_steps=5, weight_decay=0.01,
    report_to=[], save_strategy="no", logging_strategy="no", use_cpu=True, disable_tqdm=True, seed=0,
)
# %%
trainer = Trainer(model=model, args=training_args, train_dataset=BlockDataset())
trainer.train()
