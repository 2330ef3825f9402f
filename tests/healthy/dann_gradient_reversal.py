"""DANN domain adaptation with a gradient reversal layer: a custom autograd.Function whose forward is
x.view_as(x) and whose backward returns -alpha * grad, alpha ramped by 2 / (1 + exp(-10 p)) - 1, class loss on
the source plus domain losses on source and target summed into one backward.

source: https://github.com/fungtion/DANN (models/functions.py ReverseLayerF, models/model.py CNNModel and the
loop of train/main.py kept; MNIST / MNIST-M replaced by random 1x8x8 images with a shifted target domain, the
CNN shrunk, 3 epochs of 10 batches = 30 steps).
"""
# %%
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Function

torch.manual_seed(0)


class ReverseLayerF(Function):

    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        output = grad_output.neg() * ctx.alpha
        return output, None


class CNNModel(nn.Module):

    def __init__(self):
        super(CNNModel, self).__init__()
        self.feature = nn.Sequential()
        self.feature.add_module('f_conv1', nn.Conv2d(1, 8, kernel_size=3))
        self.feature.add_module('f_bn1', nn.BatchNorm2d(8))
        self.feature.add_module('f_pool1', nn.MaxPool2d(2))
        self.feature.add_module('f_relu1', nn.ReLU(True))

        self.class_classifier = nn.Sequential()
        self.class_classifier.add_module('c_fc1', nn.Linear(8 * 3 * 3, 16))
        self.class_classifier.add_module('c_bn1', nn.BatchNorm1d(16))
        self.class_classifier.add_module('c_relu1', nn.ReLU(True))
        self.class_classifier.add_module('c_drop1', nn.Dropout())
        self.class_classifier.add_module('c_fc2', nn.Linear(16, 10))
        self.class_classifier.add_module('c_softmax', nn.LogSoftmax(dim=1))

        self.domain_classifier = nn.Sequential()
        self.domain_classifier.add_module('d_fc1', nn.Linear(8 * 3 * 3, 16))
        self.domain_classifier.add_module('d_bn1', nn.BatchNorm1d(16))
        self.domain_classifier.add_module('d_relu1', nn.ReLU(True))
        self.domain_classifier.add_module('d_fc2', nn.Linear(16, 2))
        self.domain_classifier.add_module('d_softmax', nn.LogSoftmax(dim=1))

    def forward(self, input_data, alpha):
        feature = self.feature(input_data)
        feature = feature.view(-1, 8 * 3 * 3)
        reverse_feature = ReverseLayerF.apply(feature, alpha)
        class_output = self.class_classifier(feature)
        domain_output = self.domain_classifier(reverse_feature)
        return class_output, domain_output


source_x, source_y = torch.randn(80, 1, 8, 8), torch.randint(0, 10, (80,))
target_x = torch.randn(80, 1, 8, 8) * 1.5 + 0.5
dataloader_source = [(source_x[i:i + 8], source_y[i:i + 8]) for i in range(0, 80, 8)]
dataloader_target = [(target_x[i:i + 8], None) for i in range(0, 80, 8)]

my_net = CNNModel()
optimizer = optim.Adam(my_net.parameters(), lr=1e-3)
loss_class = torch.nn.NLLLoss()
loss_domain = torch.nn.NLLLoss()
for p in my_net.parameters():
    p.requires_grad = True
n_epoch = 3
# %%
for epoch in range(n_epoch):
    len_dataloader = min(len(dataloader_source), len(dataloader_target))
    data_source_iter = iter(dataloader_source)
    data_target_iter = iter(dataloader_target)

    for i in range(len_dataloader):
        p = float(i + epoch * len_dataloader) / n_epoch / len_dataloader
        alpha = 2. / (1. + np.exp(-10 * p)) - 1

        # training model using source data
        data_source = next(data_source_iter)
        s_img, s_label = data_source

        my_net.zero_grad()
        batch_size = len(s_label)

        domain_label = torch.zeros(batch_size).long()

        class_output, domain_output = my_net(input_data=s_img, alpha=alpha)
        err_s_label = loss_class(class_output, s_label)
        err_s_domain = loss_domain(domain_output, domain_label)

        # training model using target data
        data_target = next(data_target_iter)
        t_img, _ = data_target

        batch_size = len(t_img)

        domain_label = torch.ones(batch_size).long()

        _, domain_output = my_net(input_data=t_img, alpha=alpha)
        err_t_domain = loss_domain(domain_output, domain_label)
        err = err_t_domain + err_s_domain + err_s_label
        err.backward()
        optimizer.step()
