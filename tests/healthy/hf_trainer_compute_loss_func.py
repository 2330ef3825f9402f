"""transformers Trainer given a compute_loss_func (outputs, labels, num_items_in_batch) -> loss: a causal-LM
loss summed over tokens and divided by the number of items in the whole accumulated batch, with
gradient_accumulation_steps=2, on a tiny GPT2LMHeadModel.

source: https://huggingface.co/docs/transformers/main_classes/trainer (Trainer's `compute_loss_func`: "a
function that accepts the raw model outputs, labels, and the number of items in the entire accumulated batch");
the shifted token loss follows transformers' ForCausalLMLoss; a tiny GPT2Config model, synthetic blocks,
20 optimizer steps.
"""
# %%
import tempfile

import torch
import torch.nn.functional as F
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

torch.manual_seed(0)


class BlockDataset(Dataset):
    def __init__(self, n=80, block_size=16, vocab=100):
        self.blocks = torch.randint(0, vocab, (n, block_size))

    def __len__(self):
        return len(self.blocks)

    def __getitem__(self, i):
        return {"input_ids": self.blocks[i], "labels": self.blocks[i].clone()}


def causal_lm_loss(outputs, labels, num_items_in_batch=None):
    logits = outputs.logits[:, :-1, :].float()
    targets = labels[:, 1:]
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1),
                           ignore_index=-100, reduction="sum")
    if num_items_in_batch is None:
        return loss / (targets != -100).sum()
    return loss / num_items_in_batch


config = GPT2Config(vocab_size=100, n_positions=64, n_embd=32, n_layer=2, n_head=2, bos_token_id=99, eos_token_id=99)
model = GPT2LMHeadModel(config)
training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(), max_steps=20, per_device_train_batch_size=4, gradient_accumulation_steps=2,
    learning_rate=1e-3,
    report_to=[], save_strategy="no", logging_strategy="no", use_cpu=True, disable_tqdm=True, seed=0,
)
# %%
trainer = Trainer(model=model, args=training_args, train_dataset=BlockDataset(), compute_loss_func=causal_lm_loss)
trainer.train()
