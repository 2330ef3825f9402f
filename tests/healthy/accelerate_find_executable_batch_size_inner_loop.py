"""accelerate's find_executable_batch_size: the whole training (model, optimizer, dataloaders, scheduler,
prepare, train and eval loops) lives in an inner function decorated with
`@find_executable_batch_size(starting_batch_size=...)`, which frees the accelerator's references
(`accelerator.free_memory()`) and rebuilds everything from scratch for the batch size it is called with
(halving it after an out-of-memory error); the model is a transformers sequence classifier fed dict batches
from a padding collate_fn, with a linear warmup schedule and gather_for_metrics in evaluation.

source: https://github.com/huggingface/accelerate/blob/main/examples/by_feature/memory.py (training_function
and inner_training_loop kept; get_dataloaders' tokenizer.pad collate replaced by padding synthetic token
lists by hand with the same pad_to_multiple_of rule, GLUE/MRPC by a synthetic pair task, `evaluate`'s metric
by a running accuracy, AutoModelForSequenceClassification.from_pretrained("bert-base-cased") by a tiny
ElectraForSequenceClassification built from its config; Accelerator(cpu=True), warmup 2 steps, 3 epochs of
12 batches of 8).
"""
# %%
import torch
from accelerate import Accelerator
from accelerate.utils import find_executable_batch_size
from torch.optim import AdamW
from torch.utils.data import DataLoader
from transformers import ElectraConfig, ElectraForSequenceClassification, get_linear_schedule_with_warmup, set_seed

EVAL_BATCH_SIZE = 32
PAD_ID = 0


def make_examples(n, seed):
    g = torch.Generator().manual_seed(seed)
    examples = []
    for _ in range(n):
        length = int(torch.randint(6, 14, (1,), generator=g))
        ids = torch.randint(3, 60, (length,), generator=g)
        label = int(ids[0] >= 32)
        examples.append({"input_ids": ids.tolist(), "labels": label})
    return examples


def get_dataloaders(accelerator: Accelerator, batch_size: int = 16):
    train, validation = make_examples(96, 0), make_examples(32, 1)

    def collate_fn(examples):
        # When using mixed precision we want round multiples of 8/16
        pad_to_multiple_of = 8 if accelerator.mixed_precision != "no" else None
        max_length = max(len(e["input_ids"]) for e in examples)
        if pad_to_multiple_of:
            max_length = -(-max_length // pad_to_multiple_of) * pad_to_multiple_of
        input_ids = torch.full((len(examples), max_length), PAD_ID)
        attention_mask = torch.zeros((len(examples), max_length), dtype=torch.long)
        for i, e in enumerate(examples):
            input_ids[i, :len(e["input_ids"])] = torch.tensor(e["input_ids"])
            attention_mask[i, :len(e["input_ids"])] = 1
        return {"input_ids": input_ids, "attention_mask": attention_mask,
                "labels": torch.tensor([e["labels"] for e in examples])}

    train_dataloader = DataLoader(train, shuffle=True, collate_fn=collate_fn, batch_size=batch_size)
    eval_dataloader = DataLoader(validation, shuffle=False, collate_fn=collate_fn, batch_size=EVAL_BATCH_SIZE)
    return train_dataloader, eval_dataloader


config = {"lr": 3e-3, "num_epochs": 3, "seed": 42, "batch_size": 8}
accelerator = Accelerator(cpu=True)
lr = config["lr"]
num_epochs = int(config["num_epochs"])
seed = int(config["seed"])
batch_size = int(config["batch_size"])
model_config = ElectraConfig(vocab_size=64, embedding_size=32, hidden_size=32, num_hidden_layers=2,
                             num_attention_heads=2, intermediate_size=64, max_position_embeddings=32,
                             num_labels=2)
accuracies = []


@find_executable_batch_size(starting_batch_size=batch_size)
def inner_training_loop(batch_size):
    # And now just move everything below under this function
    # We need to bring in the Accelerator object from earlier
    global accelerator
    # And reset all of its attributes that could hold onto any memory:
    accelerator.free_memory()

    # Then we can declare the model, optimizer, and everything else:
    set_seed(seed)

    model = ElectraForSequenceClassification(model_config)
    model = model.to(accelerator.device)

    # Instantiate optimizer
    optimizer = AdamW(params=model.parameters(), lr=lr)
    train_dataloader, eval_dataloader = get_dataloaders(accelerator, batch_size)

    # Instantiate scheduler
    lr_scheduler = get_linear_schedule_with_warmup(
        optimizer=optimizer,
        num_warmup_steps=2,
        num_training_steps=(len(train_dataloader) * num_epochs),
    )

    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, lr_scheduler
    )

    # Now we train the model
    for epoch in range(num_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            outputs = model(**batch)
            loss = outputs.loss
            accelerator.backward(loss)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()

        model.eval()
        correct, total = 0, 0
        for step, batch in enumerate(eval_dataloader):
            with torch.no_grad():
                outputs = model(**batch)
            predictions = outputs.logits.argmax(dim=-1)
            predictions, references = accelerator.gather_for_metrics((predictions, batch["labels"]))
            correct += (predictions == references).sum().item()
            total += references.numel()

        accuracies.append(correct / total)
# %%
inner_training_loop()
accelerator.end_training()
