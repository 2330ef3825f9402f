"""CTC fine-tuning of wav2vec2 with the Trainer, as the speech-recognition example does it: the convolutional
feature encoder frozen with model.freeze_feature_encoder() (its parameters get requires_grad False and the
encoder's `_requires_grad` flag off) while the transformer and the CTC head train; SpecAugment time masking
from the config; a DataCollatorCTCWithPadding-style collator that pads the label ids with -100;
ctc_loss_reduction="mean".

source: https://github.com/huggingface/transformers/blob/main/examples/pytorch/speech-recognition/run_speech_recognition_ctc.py
(config.update with ctc_loss_reduction / pad_token_id / vocab_size, `if model_args.freeze_feature_encoder:
model.freeze_feature_encoder()`, DataCollatorCTCWithPadding, `Trainer(model=model, data_collator=
data_collator, args=training_args, train_dataset=...)`, trainer.train()); AutoModelForCTC.from_pretrained
replaced by a tiny Wav2Vec2ForCTC from a Wav2Vec2Config (2 conv layers, 2 transformer layers, hidden 32), the
Common Voice audio by 800-sample synthetic "utterances" whose tokens are tones, 12-symbol vocabulary, batch 8,
20 steps, CPU, no saving, no evaluation metrics.
"""
# %%
import math
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import Trainer, TrainingArguments, Wav2Vec2Config, Wav2Vec2ForCTC

PAD_ID, VOCAB = 0, 12


class ToneDataset(Dataset):
    """Each utterance: 4 tokens, each a 200-sample tone at a token-specific frequency."""

    def __init__(self, n=160):
        g = torch.Generator().manual_seed(0)
        self.labels = torch.randint(1, VOCAB, (n, 4), generator=g)
        t = torch.arange(200) / 200
        self.audio = torch.stack([
            torch.cat([torch.sin(2 * math.pi * (4 + 3 * int(tok)) * t) for tok in row]) for row in self.labels
        ]) + 0.05 * torch.randn(n, 800, generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_values": self.audio[i], "labels": self.labels[i].tolist()}


class DataCollatorCTCWithPadding:
    def __call__(self, features):
        input_values = torch.stack([f["input_values"] for f in features])
        max_len = max(len(f["labels"]) for f in features)
        labels = torch.full((len(features), max_len), -100)
        for i, f in enumerate(features):
            labels[i, :len(f["labels"])] = torch.tensor(f["labels"])
        return {"input_values": input_values, "labels": labels}


torch.manual_seed(0)
config = Wav2Vec2Config(vocab_size=VOCAB, pad_token_id=PAD_ID, ctc_loss_reduction="mean", hidden_size=32,
                        num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, conv_dim=(16, 16),
                        conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=8,
                        num_conv_pos_embedding_groups=2, mask_time_prob=0.05, mask_time_length=4,
                        layerdrop=0.0, activation_dropout=0.0)
model = Wav2Vec2ForCTC(config)

# freeze encoder
model.freeze_feature_encoder()

training_args = TrainingArguments(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=8, learning_rate=3e-3,
                                  warmup_steps=2, max_steps=20, logging_steps=5, save_strategy="no",
                                  report_to="none", disable_tqdm=True, use_cpu=True, seed=0)
trainer = Trainer(model=model, data_collator=DataCollatorCTCWithPadding(), args=training_args,
                  train_dataset=ToneDataset())
# %%
train_result = trainer.train()
