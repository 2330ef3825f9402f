"""The original transformers language-model fine-tuning loop: GPT-2, no-decay parameter groups, AdamW,
get_linear_schedule_with_warmup, gradient accumulation, clip_grad_norm_, then `model.zero_grad()`.

source: https://github.com/huggingface/transformers/blob/v2.3.0/examples/run_lm_finetuning.py (train():
`outputs = model(inputs, masked_lm_labels=labels) if args.mlm else model(inputs, labels=labels)`,
`loss = outputs[0]`, `loss = loss / args.gradient_accumulation_steps`, `loss.backward()`, then every
accumulation: clip_grad_norm_, optimizer.step(), scheduler.step(), model.zero_grad()); the causal-LM branch,
torch's AdamW, a tiny GPT2Config model, 20 optimizer steps over 40 batches.
"""
# %%
import torch
from torch.utils.data import DataLoader, RandomSampler, TensorDataset
from transformers import GPT2Config, GPT2LMHeadModel, get_linear_schedule_with_warmup

torch.manual_seed(0)


class Args:
    gradient_accumulation_steps = 2
    max_grad_norm = 1.0
    learning_rate = 1e-3
    adam_epsilon = 1e-8
    weight_decay = 0.0
    warmup_steps = 4
    num_train_epochs = 5


args = Args()
train_dataset = TensorDataset(torch.randint(0, 100, (64, 16)))
train_dataloader = DataLoader(train_dataset, sampler=RandomSampler(train_dataset), batch_size=8)
model = GPT2LMHeadModel(GPT2Config(vocab_size=100, n_positions=64, n_embd=32, n_layer=2, n_head=2, bos_token_id=99, eos_token_id=99))
t_total = len(train_dataloader) // args.gradient_accumulation_steps * args.num_train_epochs
no_decay = ["bias", "LayerNorm.weight"]
optimizer_grouped_parameters = [
    {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
     "weight_decay": args.weight_decay},
    {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
]
optimizer = torch.optim.AdamW(optimizer_grouped_parameters, lr=args.learning_rate, eps=args.adam_epsilon)
scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=args.warmup_steps,
                                            num_training_steps=t_total)
# %%
global_step = 0
tr_loss = 0.0
model.zero_grad()
for _ in range(args.num_train_epochs):
    for step, (batch,) in enumerate(train_dataloader):
        inputs, labels = batch, batch
        model.train()
        outputs = model(inputs, labels=labels)
        loss = outputs[0]  # model outputs are always tuple in transformers (see doc)
        if args.gradient_accumulation_steps > 1:
            loss = loss / args.gradient_accumulation_steps
        loss.backward()
        tr_loss += loss.item()
        if (step + 1) % args.gradient_accumulation_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            scheduler.step()  # Update learning rate schedule
            model.zero_grad()
            global_step += 1
