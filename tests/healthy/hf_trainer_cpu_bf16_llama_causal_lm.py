"""transformers' Trainer doing bf16 mixed-precision training on the CPU (TrainingArguments(bf16=True,
use_cpu=True)): Trainer runs the forward under CPU autocast(bfloat16) with no grad scaler, on a decoder-only
Llama built from a LlamaConfig (RMSNorm, rotary embeddings, SwiGLU MLP, tied embeddings off), with
DataCollatorForLanguageModeling(mlm=False) style labels made by a small collator, a cosine schedule with
warmup and gradient clipping at max_grad_norm.

source: https://huggingface.co/docs/transformers/perf_train_cpu ("Trainer supports AMP training with CPU by
adding the --use_cpu, and --bf16 parameters", `training_args = TrainingArguments(output_dir="./outputs",
bf16=True, use_cpu=True)`); a 2-layer LlamaForCausalLM with hidden size 32 in place of a pretrained
checkpoint, 128 synthetic sequences of 16 tokens with a learnable pattern, batch 8, 24 steps, output to a
temp dir, no saving, no reporting.
"""
# %%
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments


class PatternDataset(Dataset):
    def __init__(self, n=128, length=16, vocab=64):
        g = torch.Generator().manual_seed(0)
        starts = torch.randint(0, vocab, (n, 1), generator=g)
        steps = torch.randint(1, 4, (n, 1), generator=g)
        self.ids = (starts + steps * torch.arange(length)) % vocab

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i]}


def collate(examples):
    input_ids = torch.stack([e["input_ids"] for e in examples])
    return {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids), "labels": input_ids.clone()}


torch.manual_seed(0)
config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32,
                     tie_word_embeddings=False, bos_token_id=0, eos_token_id=1, pad_token_id=None)
model = LlamaForCausalLM(config)
training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(),
    bf16=True,
    use_cpu=True,
    per_device_train_batch_size=8,
    learning_rate=3e-3,
    lr_scheduler_type="cosine",
    warmup_steps=3,
    max_grad_norm=1.0,
    max_steps=24,
    logging_steps=8,
    save_strategy="no",
    report_to="none",
    disable_tqdm=True,
    seed=0,
)
trainer = Trainer(model=model, args=training_args, train_dataset=PatternDataset(), data_collator=collate)
# %%
trainer.train()
