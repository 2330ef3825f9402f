"""CodeParrot's GPT-2 pretraining script: a ConstantLengthDataset (an IterableDataset that concatenates
tokenized files with a separator token and yields fixed-length chunks), AdamW over get_grouped_params (no
weight decay for biases and LayerNorm weights), gradient accumulation by hand (`loss / gradient_accumulation_
steps`, backward every step, clip / step / scheduler / zero_grad only when `step % gradient_accumulation_steps
== 0`) through accelerator.backward and accelerator.clip_grad_norm_, the model called as
`model(batch, labels=batch, use_cache=False)`, and a periodic evaluate() under model.eval() / torch.no_grad()
followed by model.train().

source: https://github.com/huggingface/transformers/blob/main/examples/research_projects/codeparrot/scripts/codeparrot_training.py
(ConstantLengthDataset, get_grouped_params, evaluate and the training loop kept; no wandb/tensorboard, no hub
repository, no save_state, no tflops logging); AutoModelForCausalLM.from_pretrained replaced by a tiny
GPT2LMHeadModel from GPT2Config, the streamed code dataset by pre-tokenized synthetic "files"
(tokenized=True), Accelerator(cpu=True), seq_length 16, batch 4, gradient_accumulation_steps 2, 20 optimizer
steps, evaluation every 20 micro steps.
"""
# %%
from argparse import Namespace

import torch
from accelerate import Accelerator, DistributedType
from torch.optim import AdamW
from torch.utils.data import IterableDataset
from torch.utils.data.dataloader import DataLoader
from transformers import GPT2Config, GPT2LMHeadModel, get_scheduler, set_seed


class ConstantLengthDataset(IterableDataset):
    def __init__(self, tokenizer, dataset, infinite=False, seq_length=1024, num_of_sequences=1024,
                 chars_per_token=3.6, tokenized=False):
        self.tokenizer = tokenizer
        self.concat_token_id = tokenizer.bos_token_id
        self.dataset = dataset
        self.seq_length = seq_length
        self.epoch = 0
        self.infinite = infinite
        self.current_size = 0
        self.tokenized = tokenized

        if self.tokenized:
            self.max_buffer_size = seq_length * num_of_sequences
            self.content_field = "input_ids"
        else:
            self.max_buffer_size = seq_length * chars_per_token * num_of_sequences
            self.content_field = "content"

    def __iter__(self):
        iterator = iter(self.dataset)
        more_examples = True
        while more_examples:
            buffer, buffer_len = [], 0
            while True:
                if buffer_len >= self.max_buffer_size:
                    break
                try:
                    buffer.append(next(iterator)[self.content_field])
                    buffer_len += len(buffer[-1])
                except StopIteration:
                    if self.infinite:
                        iterator = iter(self.dataset)
                        self.epoch += 1
                    else:
                        more_examples = False
                        break
            if self.tokenized:
                tokenized_inputs = buffer
            else:
                tokenized_inputs = self.tokenizer(buffer, truncation=False)["input_ids"]
            all_token_ids = []
            for tokenized_input in tokenized_inputs:
                all_token_ids.extend(tokenized_input + [self.concat_token_id])
            for i in range(0, len(all_token_ids), self.seq_length):
                input_ids = all_token_ids[i: i + self.seq_length]
                if len(input_ids) == self.seq_length:
                    self.current_size += 1
                    yield torch.tensor(input_ids)


def get_grouped_params(model, args, no_decay=["bias", "ln_1.weight", "ln_2.weight", "ln_f.weight"]):
    params_with_wd, params_without_wd = [], []
    for n, p in model.named_parameters():
        if any(nd in n for nd in no_decay):
            params_without_wd.append(p)
        else:
            params_with_wd.append(p)
    return [
        {"params": params_with_wd, "weight_decay": args.weight_decay},
        {"params": params_without_wd, "weight_decay": 0.0},
    ]


def evaluate(args):
    model.eval()
    losses = []
    for step, batch in enumerate(eval_dataloader):
        with torch.no_grad():
            outputs = model(batch, labels=batch)
        loss = outputs.loss.repeat(args.valid_batch_size)
        losses.append(accelerator.gather(loss))
        if args.max_eval_steps > 0 and step >= args.max_eval_steps:
            break
    losses = torch.cat(losses)
    loss = losses[: eval_dataloader.dataset.current_size].mean()
    try:
        perplexity = torch.exp(loss)
    except OverflowError:
        perplexity = float("inf")
    return loss.item(), perplexity.item()


class ToyTokenizer:
    bos_token_id = 1
    vocab_size = 48


accelerator = Accelerator(cpu=True)
args = Namespace(seed=1, train_batch_size=4, valid_batch_size=4, seq_length=16, shuffle_buffer=10,
                 learning_rate=2e-3, lr_scheduler_type="cosine", num_warmup_steps=3, weight_decay=0.1,
                 gradient_accumulation_steps=2, max_train_steps=20, max_eval_steps=2, save_checkpoint_steps=20)
set_seed(args.seed)
tokenizer = ToyTokenizer()


def synthetic_files(n, seed):
    g = torch.Generator().manual_seed(seed)
    files = []
    for _ in range(n):
        start = int(torch.randint(2, 40, (1,), generator=g))
        length = int(torch.randint(20, 40, (1,), generator=g))
        files.append({"input_ids": [2 + (start + k) % 46 for k in range(length)]})
    return files


train_data, valid_data = synthetic_files(60, 0), synthetic_files(10, 1)
train_dataset = ConstantLengthDataset(tokenizer, train_data, infinite=True, seq_length=args.seq_length,
                                      num_of_sequences=16, tokenized=True)
valid_dataset = ConstantLengthDataset(tokenizer, valid_data, infinite=False, seq_length=args.seq_length,
                                      num_of_sequences=16, tokenized=True)
train_dataloader = DataLoader(train_dataset, batch_size=args.train_batch_size)
eval_dataloader = DataLoader(valid_dataset, batch_size=args.valid_batch_size)

model = GPT2LMHeadModel(GPT2Config(vocab_size=tokenizer.vocab_size, n_positions=32, n_embd=32, n_layer=2, n_head=2,
                                   bos_token_id=1, eos_token_id=1))
optimizer = AdamW(get_grouped_params(model, args), lr=args.learning_rate)
lr_scheduler = get_scheduler(
    name=args.lr_scheduler_type,
    optimizer=optimizer,
    num_warmup_steps=args.num_warmup_steps,
    num_training_steps=args.max_train_steps,
)
accelerator.register_for_checkpointing(lr_scheduler)


def get_lr():
    return optimizer.param_groups[0]["lr"]


model, optimizer, train_dataloader, eval_dataloader = accelerator.prepare(
    model, optimizer, train_dataloader, eval_dataloader
)
metrics = []
# %%
model.train()
completed_steps = 0
for step, batch in enumerate(train_dataloader, start=1):
    loss = model(batch, labels=batch, use_cache=False).loss
    metrics.append({"lr": get_lr(), "steps": completed_steps, "loss/train": loss.item()})
    loss = loss / args.gradient_accumulation_steps
    if step % args.gradient_accumulation_steps != 0:
        # Prevent backward from doing gradient all_reduce in every step
        if accelerator.distributed_type == DistributedType.MULTI_GPU:
            with model.no_sync():
                accelerator.backward(loss)
        else:
            accelerator.backward(loss)
    else:
        accelerator.backward(loss)
        accelerator.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        completed_steps += 1
    if step % args.save_checkpoint_steps == 0:
        eval_loss, perplexity = evaluate(args)
        metrics.append({"loss/eval": eval_loss, "perplexity": perplexity})
        accelerator.wait_for_everyone()
        model.train()
    if completed_steps >= args.max_train_steps:
        break

eval_loss, perplexity = evaluate(args)
