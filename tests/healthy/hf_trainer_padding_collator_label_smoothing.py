"""transformers Trainer with a data_collator that pads variable-length examples per batch (pad id 0, attention
mask 0 on the padding) and label_smoothing_factor=0.1, on a tiny DistilBertForSequenceClassification.

source: https://huggingface.co/docs/transformers/main_classes/data_collator (dynamic padding to the longest
example of the batch, as DataCollatorWithPadding does) and https://huggingface.co/docs/transformers/main_classes/trainer
(`data_collator`, TrainingArguments `label_smoothing_factor`); a hand-written collator since there is no
tokenizer to download; a tiny DistilBertConfig model, max_steps=25.
"""
# %%
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import DistilBertConfig, DistilBertForSequenceClassification, Trainer, TrainingArguments

torch.manual_seed(0)


class VariableLengthDataset(Dataset):
    def __init__(self, n=64, vocab=100):
        self.examples = [torch.randint(1, vocab, (int(torch.randint(4, 16, ())),)) for _ in range(n)]
        self.labels = [int(len(e) > 9) for e in self.examples]

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        return {"input_ids": self.examples[i].tolist(), "label": self.labels[i]}


def pad_collator(features, pad_token_id=0):
    longest = max(len(f["input_ids"]) for f in features)
    input_ids = torch.full((len(features), longest), pad_token_id, dtype=torch.long)
    attention_mask = torch.zeros((len(features), longest), dtype=torch.long)
    for row, f in enumerate(features):
        input_ids[row, :len(f["input_ids"])] = torch.tensor(f["input_ids"])
        attention_mask[row, :len(f["input_ids"])] = 1
    labels = torch.tensor([f["label"] for f in features], dtype=torch.long)
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


config = DistilBertConfig(vocab_size=100, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                          max_position_embeddings=64, num_labels=2)
model = DistilBertForSequenceClassification(config)
training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(), max_steps=25, per_device_train_batch_size=8, learning_rate=3e-4,
    label_smoothing_factor=0.1, remove_unused_columns=False,
    report_to=[], save_strategy="no", logging_strategy="no", use_cpu=True, disable_tqdm=True, seed=0,
)
# %%
trainer = Trainer(model=model, args=training_args, train_dataset=VariableLengthDataset(), data_collator=pad_collator)
trainer.train()
