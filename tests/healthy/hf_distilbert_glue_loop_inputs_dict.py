"""The original transformers GLUE fine-tuning loop on DistilBERT: TensorDataset batches turned into an
`inputs` dict, `outputs = model(**inputs)`, `loss = outputs[0]`, clip_grad_norm_, step, scheduler, zero_grad.

source: https://github.com/huggingface/transformers/blob/v2.3.0/examples/run_glue.py (train(): `inputs =
{"input_ids": batch[0], "attention_mask": batch[1], "labels": batch[3]}`, DistilBERT gets no token_type_ids,
`loss = outputs[0]`, accumulation, clip_grad_norm_, optimizer.step(), scheduler.step(), model.zero_grad());
torch's AdamW, a tiny DistilBertConfig model, 24 steps.
"""
# %%
import torch
from torch.utils.data import DataLoader, RandomSampler, TensorDataset
from transformers import DistilBertConfig, DistilBertForSequenceClassification, get_linear_schedule_with_warmup

torch.manual_seed(0)
n, length = 64, 12
all_input_ids = torch.randint(1, 100, (n, length))
all_attention_mask = torch.ones(n, length, dtype=torch.long)
all_token_type_ids = torch.zeros(n, length, dtype=torch.long)
all_labels = torch.randint(0, 2, (n,))
train_dataset = TensorDataset(all_input_ids, all_attention_mask, all_token_type_ids, all_labels)
train_dataloader = DataLoader(train_dataset, sampler=RandomSampler(train_dataset), batch_size=8)
model = DistilBertForSequenceClassification(DistilBertConfig(
    vocab_size=100, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=64, num_labels=2))
model_type = "distilbert"
num_train_epochs, max_grad_norm = 3, 1.0
t_total = len(train_dataloader) * num_train_epochs
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4, eps=1e-8)
scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=0, num_training_steps=t_total)
# %%
global_step = 0
tr_loss = 0.0
model.zero_grad()
for _ in range(num_train_epochs):
    for step, batch in enumerate(train_dataloader):
        model.train()
        batch = tuple(t.to("cpu") for t in batch)
        inputs = {"input_ids": batch[0], "attention_mask": batch[1], "labels": batch[3]}
        if model_type != "distilbert":
            inputs["token_type_ids"] = batch[2] if model_type in ["bert", "xlnet"] else None
        outputs = model(**inputs)
        loss = outputs[0]  # model outputs are always tuple in transformers (see doc)
        loss.backward()
        tr_loss += loss.item()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
        scheduler.step()  # Update learning rate schedule
        model.zero_grad()
        global_step += 1
