"""open_clip's CLIP training step with --accum-freq 2: the features of each micro-batch are first computed and
cached under torch.no_grad() (logit_scale popped); once accum_freq batches are in, the optimizer is zeroed and
every micro-batch is forwarded again with grad, its fresh features spliced into the cached ones of the others
(`torch.cat(accumulated[:j] + [model_out[key]] + accumulated[j + 1:])`), and each ClipLoss backwarded; then one
optimizer step and an in-place clamp of the learned temperature under torch.no_grad()
(`logit_scale.clamp_(0, math.log(100))`). The lr comes from a cosine_lr adjuster called with the step
number, AdamW has a no-decay group for gains, biases and logit_scale.

source: https://github.com/mlfoundations/open_clip/blob/main/src/open_clip_train/legacy_train.py
(train_one_epoch: the accum_freq > 1 branch, backward(), the clamp) with ClipLoss from
src/open_clip/loss.py, cosine_lr / assign_learning_rate from src/open_clip_train/scheduler.py and the
gain_or_bias_params / rest_params AdamW groups of legacy_main.py; single process (world_size 1), no autocast
(precision fp32), a two-tower toy CLIP (MLP image tower, EmbeddingBag text tower), batches of 16 pairs,
accum_freq 2, 40 batches = 20 optimizer steps.
"""
# %%
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim


class ClipLoss(nn.Module):

    def __init__(self, local_loss=False, gather_with_grad=False, cache_labels=False, rank=0, world_size=1):
        super().__init__()
        self.local_loss = local_loss
        self.gather_with_grad = gather_with_grad
        self.cache_labels = cache_labels
        self.rank = rank
        self.world_size = world_size

        # cache state
        self.prev_num_logits = 0
        self.labels = {}

    def get_ground_truth(self, device, num_logits) -> torch.Tensor:
        # calculated ground-truth and cache if enabled
        if self.prev_num_logits != num_logits or device not in self.labels:
            labels = torch.arange(num_logits, device=device, dtype=torch.long)
            if self.world_size > 1 and self.local_loss:
                labels = labels + num_logits * self.rank
            if self.cache_labels:
                self.labels[device] = labels
                self.prev_num_logits = num_logits
        else:
            labels = self.labels[device]
        return labels

    def get_logits(self, image_features, text_features, logit_scale):
        logits_per_image = logit_scale * image_features @ text_features.T
        logits_per_text = logit_scale * text_features @ image_features.T
        return logits_per_image, logits_per_text

    def forward(self, image_features, text_features, logit_scale, output_dict=False):
        device = image_features.device
        logits_per_image, logits_per_text = self.get_logits(image_features, text_features, logit_scale)

        labels = self.get_ground_truth(device, logits_per_image.shape[0])

        total_loss = (
            F.cross_entropy(logits_per_image, labels) +
            F.cross_entropy(logits_per_text, labels)
        ) / 2

        return {"contrastive_loss": total_loss} if output_dict else total_loss


def assign_learning_rate(optimizer, new_lr):
    for param_group in optimizer.param_groups:
        param_group["lr"] = new_lr * param_group.get("lr_scale", 1.0)


def _warmup_lr(base_lr, warmup_length, step):
    return base_lr * (step + 1) / warmup_length


def cosine_lr(optimizer, base_lr, warmup_length, steps):
    def _lr_adjuster(step):
        if step < warmup_length:
            lr = _warmup_lr(base_lr, warmup_length, step)
        else:
            e = step - warmup_length
            es = steps - warmup_length
            lr = 0.5 * (1 + math.cos(math.pi * e / es)) * base_lr
        assign_learning_rate(optimizer, lr)
        return lr

    return _lr_adjuster


def backward(total_loss, scaler):
    if scaler is not None:
        scaler.scale(total_loss).backward()
    else:
        total_loss.backward()


def unwrap_model(model):
    if hasattr(model, 'module'):
        return model.module
    else:
        return model


class ToyCLIP(nn.Module):
    def __init__(self, embed_dim=16, vocab=50):
        super().__init__()
        self.visual = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 64), nn.GELU(), nn.Linear(64, embed_dim))
        self.token_embedding = nn.EmbeddingBag(vocab, 32)
        self.ln_final = nn.LayerNorm(32)
        self.text_projection = nn.Parameter(torch.randn(32, embed_dim) / 32 ** 0.5)
        self.logit_scale = nn.Parameter(torch.ones([]) * np.log(1 / 0.07))

    def forward(self, image, text):
        image_features = F.normalize(self.visual(image), dim=-1)
        text_features = F.normalize(self.ln_final(self.token_embedding(text)) @ self.text_projection, dim=-1)
        return {"image_features": image_features, "text_features": text_features,
                "logit_scale": self.logit_scale.exp()}


class Args:
    accum_freq, grad_clip_norm, lr, wd, beta1, beta2, eps, warmup, epochs = 2, 1.0, 1e-3, 0.1, 0.9, 0.98, 1e-6, 3, 2


args = Args()
torch.manual_seed(0)
model = ToyCLIP()
loss = ClipLoss()

exclude = lambda n, p: p.ndim < 2 or "bn" in n or "ln" in n or "bias" in n or 'logit_scale' in n
include = lambda n, p: not exclude(n, p)
named_parameters = list(model.named_parameters())
gain_or_bias_params = [p for n, p in named_parameters if exclude(n, p) and p.requires_grad]
rest_params = [p for n, p in named_parameters if include(n, p) and p.requires_grad]
optimizer = optim.AdamW(
    [
        {"params": gain_or_bias_params, "weight_decay": 0.},
        {"params": rest_params, "weight_decay": args.wd},
    ],
    lr=args.lr, betas=(args.beta1, args.beta2), eps=args.eps,
)
scaler = None

# 20 "captioned images": each class has a prototype image and 4 caption tokens
prototypes = torch.rand(20, 3, 8, 8)
captions = torch.randint(0, 50, (20, 4))


def make_dataloader(n_batches=20, batch_size=16):
    for _ in range(n_batches):
        idx = torch.randperm(20)[:batch_size]
        yield {"image": prototypes[idx] + 0.05 * torch.randn(batch_size, 3, 8, 8), "text": captions[idx]}


num_batches_per_epoch = 20 // args.accum_freq
total_steps = num_batches_per_epoch * args.epochs
scheduler = cosine_lr(optimizer, args.lr, args.warmup, total_steps)
# %%
for epoch in range(args.epochs):
    model.train()
    dataloader = make_dataloader()
    if args.accum_freq > 1:
        accum_images, accum_texts, accum_features = [], [], {}
    for i, batch in enumerate(dataloader):
        i_accum = i // args.accum_freq
        step = num_batches_per_epoch * epoch + i_accum
        scheduler(step)

        images, texts = batch["image"], batch["text"]
        optimizer.zero_grad()

        # First, cache the features without any gradient tracking.
        with torch.no_grad():
            model_out = model(images, texts)
            for f in ("logit_scale", "logit_bias"):
                model_out.pop(f, None)
            for key, val in model_out.items():
                if key in accum_features:
                    accum_features[key].append(val)
                else:
                    accum_features[key] = [val]
            accum_images.append(images)
            accum_texts.append(texts)

        # If (i + 1) % accum_freq is not zero, move on to the next batch.
        if ((i + 1) % args.accum_freq) > 0:
            continue

        # Now, ready to take gradients for the last accum_freq batches.
        # Re-do the forward pass for those batches, and use the cached features from the other batches as negatives.
        # Call backwards each time, but only step optimizer at the end.
        optimizer.zero_grad()
        for j in range(args.accum_freq):
            images = accum_images[j]
            texts = accum_texts[j]
            model_out = model(images, texts)
            inputs_no_accum = {}
            inputs_no_accum["logit_scale"] = logit_scale = model_out.pop("logit_scale")
            inputs = {}
            for key, val in accum_features.items():
                accumulated = accum_features[key]
                inputs[key] = torch.cat(accumulated[:j] + [model_out[key]] + accumulated[j + 1:])
            losses = loss(**inputs, **inputs_no_accum, output_dict=True)
            del inputs
            del inputs_no_accum
            total_loss = sum(losses.values())
            losses["loss"] = total_loss
            backward(total_loss, scaler)

        if args.grad_clip_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip_norm, norm_type=2.0)
        optimizer.step()

        # reset gradient accum, if enabled
        if args.accum_freq > 1:
            accum_images, accum_texts, accum_features = [], [], {}

        # Note: we clamp to 4.6052 = ln(100), as in the original paper.
        with torch.no_grad():
            unwrap_model(model).logit_scale.clamp_(0, math.log(100))
