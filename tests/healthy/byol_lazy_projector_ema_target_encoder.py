"""BYOL as the byol-pytorch library does it: the online encoder reads a hidden layer of the wrapped net through
a forward hook, its projector is built lazily on the first forward (a mock forward in __init__, before the
optimizer exists), the target encoder is a deepcopy with requires_grad False kept as a submodule (so
`learner.parameters()` hands the optimizer frozen tensors too, and the net's own last layer, never used by the
loss, gets no gradient), targets are computed under torch.no_grad() and detached, and after every step
update_moving_average rebinds each target parameter's `.data` to an EMA of the online one.

source: https://github.com/lucidrains/byol-pytorch/blob/master/byol_pytorch/byol_pytorch.py (helpers, EMA,
update_moving_average, MLP, NetWrapper, BYOL kept; the simplicial-embedding option, which needs einops, and
the torchvision default augmentation dropped) and the README usage (`learner = BYOL(resnet, image_size=256,
hidden_layer='avgpool')`, `opt = torch.optim.Adam(learner.parameters(), lr=3e-4)`, loss/zero_grad/backward/
step/`learner.update_moving_average()`); a small conv net with an `avgpool` child instead of ResNet-50, a flip
+ noise augment_fn, 8x8 images, 30 steps.
"""
# %%
import copy
import random
from functools import wraps

import torch
from torch import nn
from torch.nn import Module
import torch.nn.functional as F
import torch.distributed as dist


def default(val, def_val):
    return def_val if val is None else val


def l2norm(t):
    return F.normalize(t, dim=-1, p=2)


def flatten(t):
    return t.reshape(t.shape[0], -1)


def singleton(cache_key):
    def inner_fn(fn):
        @wraps(fn)
        def wrapper(self, *args, **kwargs):
            instance = getattr(self, cache_key)
            if instance is not None:
                return instance

            instance = fn(self, *args, **kwargs)
            setattr(self, cache_key, instance)
            return instance
        return wrapper
    return inner_fn


def get_module_device(module):
    return next(module.parameters()).device


def set_requires_grad(model, val):
    for p in model.parameters():
        p.requires_grad = val


def MaybeSyncBatchnorm(is_distributed=None):
    is_distributed = default(is_distributed, dist.is_initialized() and dist.get_world_size() > 1)
    return nn.SyncBatchNorm if is_distributed else nn.BatchNorm1d


def cosine_loss_fn(x, y):
    x = l2norm(x)
    y = l2norm(y)
    return 2 - 2 * (x * y).sum(dim=-1)


class EMA():
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def update_average(self, old, new):
        if old is None:
            return new
        return old * self.beta + (1 - self.beta) * new


def update_moving_average(ema_updater, ma_model, current_model):
    for current_params, ma_params in zip(current_model.parameters(), ma_model.parameters()):
        old_weight, up_weight = ma_params.data, current_params.data
        ma_params.data = ema_updater.update_average(old_weight, up_weight)


def MLP(dim, projection_size, hidden_size=4096, sync_batchnorm=None):
    return nn.Sequential(
        nn.Linear(dim, hidden_size),
        MaybeSyncBatchnorm(sync_batchnorm)(hidden_size),
        nn.ReLU(inplace=True),
        nn.Linear(hidden_size, projection_size)
    )


class NetWrapper(Module):
    def __init__(self, net, projection_size, projection_hidden_size, layer=-2, sync_batchnorm=None):
        super().__init__()
        self.net = net
        self.layer = layer

        self.projector = None
        self.projection_size = projection_size
        self.projection_hidden_size = projection_hidden_size

        self.sync_batchnorm = sync_batchnorm

        self.hidden = {}
        self.hook_registered = False

    def _find_layer(self):
        if type(self.layer) == str:
            modules = dict([*self.net.named_modules()])
            return modules.get(self.layer, None)
        elif type(self.layer) == int:
            children = [*self.net.children()]
            return children[self.layer]
        return None

    def _hook(self, _, input, output):
        device = input[0].device
        self.hidden[device] = flatten(output)

    def _register_hook(self):
        layer = self._find_layer()
        assert layer is not None, f'hidden layer ({self.layer}) not found'
        handle = layer.register_forward_hook(self._hook)
        self.hook_registered = True

    @singleton('projector')
    def _get_projector(self, hidden):
        _, dim = hidden.shape
        projector = MLP(dim, self.projection_size, self.projection_hidden_size, sync_batchnorm=self.sync_batchnorm)
        return projector.to(hidden)

    def get_representation(self, x):
        if self.layer == -1:
            return self.net(x)

        if not self.hook_registered:
            self._register_hook()

        self.hidden.clear()
        _ = self.net(x)
        hidden = self.hidden[x.device]
        self.hidden.clear()

        assert hidden is not None, f'hidden layer {self.layer} never emitted an output'
        return hidden

    def forward(self, x, return_projection=True):
        representation = self.get_representation(x)

        if not return_projection:
            return representation

        projector = self._get_projector(representation)
        projection = projector(representation)
        return projection, representation


class BYOL(Module):
    def __init__(self, net, image_size, hidden_layer=-2, projection_size=256, projection_hidden_size=4096,
                 augment_fn=None, augment_fn2=None, moving_average_decay=0.99, use_momentum=True,
                 sync_batchnorm=None):
        super().__init__()
        self.net = net

        self.augment1 = augment_fn
        self.augment2 = default(augment_fn2, self.augment1)

        self.online_encoder = NetWrapper(net, projection_size, projection_hidden_size, layer=hidden_layer,
                                         sync_batchnorm=sync_batchnorm)

        self.use_momentum = use_momentum
        self.target_encoder = None
        self.target_ema_updater = EMA(moving_average_decay)

        self.online_predictor = MLP(projection_size, projection_size, projection_hidden_size)

        # get device of network and make wrapper same device
        device = get_module_device(net)
        self.to(device)

        # send a mock image tensor to instantiate singleton parameters
        self.forward(torch.randn(2, 3, image_size, image_size, device=device))

    @singleton('target_encoder')
    def _get_target_encoder(self):
        target_encoder = copy.deepcopy(self.online_encoder)
        set_requires_grad(target_encoder, False)
        return target_encoder

    def reset_moving_average(self):
        del self.target_encoder
        self.target_encoder = None

    def update_moving_average(self):
        assert self.use_momentum, 'you do not need to update the moving average, since you have turned off momentum for the target encoder'
        assert self.target_encoder is not None, 'target encoder has not been created yet'
        update_moving_average(self.target_ema_updater, self.target_encoder, self.online_encoder)

    def forward(self, x, return_embedding=False, return_projection=True):
        assert not (self.training and x.shape[0] == 1), 'you must have greater than 1 sample when training, due to the batchnorm in the projection layer'

        if return_embedding:
            return self.online_encoder(x, return_projection=return_projection)

        image_one, image_two = self.augment1(x), self.augment2(x)

        images = torch.cat((image_one, image_two), dim=0)

        online_projections, _ = self.online_encoder(images)
        online_predictions = self.online_predictor(online_projections)

        online_pred_one, online_pred_two = online_predictions.chunk(2, dim=0)

        with torch.no_grad():
            target_encoder = self._get_target_encoder() if self.use_momentum else self.online_encoder

            target_projections, _ = target_encoder(images)
            target_projections = target_projections.detach()

            target_proj_one, target_proj_two = target_projections.chunk(2, dim=0)

        loss_fn = cosine_loss_fn

        loss_one = loss_fn(online_pred_one, target_proj_two.detach())
        loss_two = loss_fn(online_pred_two, target_proj_one.detach())

        loss = loss_one + loss_two
        return loss.mean()


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.relu = nn.ReLU()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.avgpool(self.relu(self.bn(self.conv(x))))
        return self.fc(torch.flatten(x, 1))


def augment_fn(x):
    if random.random() < 0.5:
        x = x.flip(-1)
    return x + 0.05 * torch.randn_like(x)


random.seed(0)
torch.manual_seed(0)
resnet = SmallNet()
learner = BYOL(resnet, image_size=8, hidden_layer='avgpool', projection_size=16, projection_hidden_size=32,
               augment_fn=augment_fn)
opt = torch.optim.Adam(learner.parameters(), lr=3e-3)
pool = torch.rand(160, 3, 8, 8)


def sample_unlabelled_images():
    return pool[torch.randint(0, 160, (16,))]
# %%
for _ in range(30):
    images = sample_unlabelled_images()
    loss = learner(images)
    opt.zero_grad()
    loss.backward()
    opt.step()
    learner.update_moving_average()  # update moving average of target encoder
