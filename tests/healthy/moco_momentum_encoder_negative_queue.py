"""MoCo: a query encoder trained by SGD and a key encoder that never gets a gradient (requires_grad False),
moved towards the query encoder by a momentum update under @torch.no_grad(); the keys are computed under
torch.no_grad() and pushed into a queue buffer of negatives (dequeue/enqueue at a pointer), the InfoNCE logits
are [l_pos, l_neg] against `self.queue.clone().detach()`, with label 0 for the positive.

source: https://github.com/facebookresearch/moco/blob/main/moco/builder.py (MoCo: __init__ with the copied,
frozen key encoder, _momentum_update_key_encoder, _dequeue_and_enqueue, forward) and the train() loop of
main_moco.py (`output, target = model(im_q=images[0], im_k=images[1])`, `loss = criterion(output, target)`,
zero_grad/backward/step); single process, so concat_all_gather and the DDP batch shuffle are the identity;
a small conv encoder with a `fc` head instead of ResNet-50, K=64, dim 16, 8x8 "images" with two noisy views,
5 epochs of 8 batches (40 SGD steps; the loss rises while real keys replace the random queue, then falls).
"""
# %%
import torch
import torch.nn as nn
import torch.nn.functional as F


class MoCo(nn.Module):
    """
    Build a MoCo model with: a query encoder, a key encoder, and a queue
    https://arxiv.org/abs/1911.05722
    """

    def __init__(self, base_encoder, dim=128, K=65536, m=0.999, T=0.07, mlp=False):
        super(MoCo, self).__init__()

        self.K = K
        self.m = m
        self.T = T

        # create the encoders
        # num_classes is the output fc dimension
        self.encoder_q = base_encoder(num_classes=dim)
        self.encoder_k = base_encoder(num_classes=dim)

        if mlp:  # hack: brute-force replacement
            dim_mlp = self.encoder_q.fc.weight.shape[1]
            self.encoder_q.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_q.fc)
            self.encoder_k.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_k.fc)

        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)  # initialize
            param_k.requires_grad = False  # not update by gradient

        # create the queue
        self.register_buffer("queue", torch.randn(dim, K))
        self.queue = nn.functional.normalize(self.queue, dim=0)

        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        """
        Momentum update of the key encoder
        """
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.mul_(self.m).add_(param_q.mul(1. - self.m))

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        # gather keys before updating queue
        keys = concat_all_gather(keys)

        batch_size = keys.shape[0]

        ptr = int(self.queue_ptr)
        assert self.K % batch_size == 0  # for simplicity

        # replace the keys at ptr (dequeue and enqueue)
        self.queue[:, ptr:ptr + batch_size] = keys.T
        ptr = (ptr + batch_size) % self.K  # move pointer

        self.queue_ptr[0] = ptr

    def forward(self, im_q, im_k):
        # compute query features
        q = self.encoder_q(im_q)  # queries: NxC
        q = nn.functional.normalize(q, dim=1)

        # compute key features
        with torch.no_grad():  # no gradient to keys
            self._momentum_update_key_encoder()  # update the key encoder

            k = self.encoder_k(im_k)  # keys: NxC
            k = nn.functional.normalize(k, dim=1)

        # compute logits
        # positive logits: Nx1
        l_pos = torch.einsum('nc,nc->n', [q, k]).unsqueeze(-1)
        # negative logits: NxK
        l_neg = torch.einsum('nc,ck->nk', [q, self.queue.clone().detach()])

        # logits: Nx(1+K)
        logits = torch.cat([l_pos, l_neg], dim=1)

        # apply temperature
        logits /= self.T

        # labels: positive key indicators
        labels = torch.zeros(logits.shape[0], dtype=torch.long)

        # dequeue and enqueue
        self._dequeue_and_enqueue(k)

        return logits, labels


@torch.no_grad()
def concat_all_gather(tensor):
    """Single process: all_gather over a world of one."""
    return torch.cat([tensor], dim=0)


class SmallConvNet(nn.Module):
    def __init__(self, num_classes=128):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.fc(self.features(x))


torch.manual_seed(0)
model = MoCo(SmallConvNet, dim=16, K=64, m=0.99, T=0.2, mlp=True)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), 0.06, momentum=0.9, weight_decay=1e-4)
base = torch.rand(128, 3, 8, 8)


def train_loader():
    for i in range(0, 128, 16):
        x = base[i:i + 16]
        yield [x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)], None
# %%
model.train()
for epoch in range(5):
    for i, (images, _) in enumerate(train_loader()):
        # compute output
        output, target = model(im_q=images[0], im_k=images[1])
        loss = criterion(output, target)

        # compute gradient and do SGD step
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
