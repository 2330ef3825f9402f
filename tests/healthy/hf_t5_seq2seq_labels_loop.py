"""Training a tiny T5ForConditionalGeneration on (input, target) pairs: `loss = model(input_ids=input_ids,
attention_mask=..., labels=labels).loss`, pad positions of the labels set to -100, AdamW by hand.

source: https://huggingface.co/docs/transformers/model_doc/t5 (Training: "the model needs input_ids and labels
... `loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss`", with
`labels[labels == tokenizer.pad_token_id] = -100`); a tiny T5Config model, synthetic copy-reverse pairs, 20 steps.
"""
# %%
import torch
from transformers import T5Config, T5ForConditionalGeneration

torch.manual_seed(0)
PAD = 0
config = T5Config(vocab_size=64, d_model=32, d_kv=8, d_ff=64, num_layers=1, num_decoder_layers=1, num_heads=4,
                  decoder_start_token_id=PAD, pad_token_id=PAD, eos_token_id=1)
model = T5ForConditionalGeneration(config)


def make_batch(batch_size=8):
    lengths = torch.randint(4, 10, (batch_size,))
    input_ids = torch.full((batch_size, 10), PAD)
    labels = torch.full((batch_size, 10), PAD)
    for row, n in enumerate(lengths.tolist()):
        seq = torch.randint(2, 64, (n,))
        input_ids[row, :n] = seq
        labels[row, :n] = seq.flip(0)
    attention_mask = (input_ids != PAD).long()
    labels[labels == PAD] = -100
    return input_ids, attention_mask, labels


batches = [make_batch() for _ in range(20)]
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
# %%
model.train()
for input_ids, attention_mask, labels in batches:
    loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
