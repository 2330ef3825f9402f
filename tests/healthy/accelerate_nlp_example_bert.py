"""accelerate's nlp_example: a BERT sequence classifier with the model, optimizer, dataloader and a
get_linear_schedule_with_warmup scheduler all prepared, `outputs = model(**batch)`, the loss divided by
gradient_accumulation_steps, accelerator.backward, step every gradient_accumulation_steps.

source: https://github.com/huggingface/accelerate/blob/main/examples/nlp_example.py (training_function:
`batch.to(accelerator.device)`, `outputs = model(**batch)`, `loss = outputs.loss`, `loss = loss /
gradient_accumulation_steps`, `accelerator.backward(loss)`, `if step % gradient_accumulation_steps == 0:
optimizer.step(); lr_scheduler.step(); optimizer.zero_grad()`); a tiny BertConfig model instead of
bert-base-cased, synthetic padded batches as BatchEncoding, CPU, gradient_accumulation_steps=1, 3 epochs of 8.
"""
# %%
import torch
from accelerate import Accelerator
from torch.optim import AdamW
from torch.utils.data import DataLoader
from transformers import (BatchEncoding, BertConfig, BertForSequenceClassification,
                          get_linear_schedule_with_warmup)

torch.manual_seed(0)
accelerator = Accelerator(cpu=True, mixed_precision="no")
examples = [{"input_ids": torch.randint(1, 100, (int(torch.randint(5, 14, ())),)).tolist(),
             "labels": int(torch.randint(0, 2, ()))} for _ in range(64)]


def collate_fn(examples):
    longest = max(len(e["input_ids"]) for e in examples)
    input_ids = torch.zeros(len(examples), longest, dtype=torch.long)
    attention_mask = torch.zeros(len(examples), longest, dtype=torch.long)
    for row, e in enumerate(examples):
        input_ids[row, :len(e["input_ids"])] = torch.tensor(e["input_ids"])
        attention_mask[row, :len(e["input_ids"])] = 1
    return BatchEncoding({"input_ids": input_ids, "attention_mask": attention_mask,
                          "labels": torch.tensor([e["labels"] for e in examples])})


train_dataloader = DataLoader(examples, shuffle=True, collate_fn=collate_fn, batch_size=8)
model = BertForSequenceClassification(BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                                                 num_attention_heads=2, intermediate_size=64,
                                                 max_position_embeddings=64, num_labels=2))
model = model.to(accelerator.device)
lr, num_epochs, gradient_accumulation_steps = 5e-4, 3, 1
optimizer = AdamW(params=model.parameters(), lr=lr)
lr_scheduler = get_linear_schedule_with_warmup(
    optimizer=optimizer, num_warmup_steps=2,
    num_training_steps=(len(train_dataloader) * num_epochs) // gradient_accumulation_steps,
)
model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
    model, optimizer, train_dataloader, lr_scheduler
)
# %%
for epoch in range(num_epochs):
    model.train()
    for step, batch in enumerate(train_dataloader):
        # We could avoid this line since we set the accelerator with `device_placement=True`.
        batch.to(accelerator.device)
        outputs = model(**batch)
        loss = outputs.loss
        loss = loss / gradient_accumulation_steps
        accelerator.backward(loss)
        if step % gradient_accumulation_steps == 0:
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
