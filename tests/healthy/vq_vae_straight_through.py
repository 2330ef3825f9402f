"""A VQ-VAE: the encoder output snapped to its nearest codebook vector, codebook and commitment losses with
.detach() on either side, the straight-through estimator `inputs + (quantized - inputs).detach()`, perplexity
of the code usage, reconstruction error divided by the data variance.

source: https://github.com/zalandoresearch/pytorch-vq-vae/blob/master/vq-vae.ipynb (VectorQuantizer, Model and
the training loop kept; the residual conv stacks reduced to two convolutions each way, CIFAR-10 replaced by 64
random 3x8x8 images, a 16-vector codebook of dimension 4, 30 updates).
"""
# %%
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class VectorQuantizer(nn.Module):
    def __init__(self, num_embeddings, embedding_dim, commitment_cost):
        super(VectorQuantizer, self).__init__()
        self._embedding_dim = embedding_dim
        self._num_embeddings = num_embeddings
        self._embedding = nn.Embedding(self._num_embeddings, self._embedding_dim)
        self._embedding.weight.data.uniform_(-1 / self._num_embeddings, 1 / self._num_embeddings)
        self._commitment_cost = commitment_cost

    def forward(self, inputs):
        # convert inputs from BCHW -> BHWC
        inputs = inputs.permute(0, 2, 3, 1).contiguous()
        input_shape = inputs.shape

        # Flatten input
        flat_input = inputs.view(-1, self._embedding_dim)

        # Calculate distances
        distances = (torch.sum(flat_input ** 2, dim=1, keepdim=True)
                     + torch.sum(self._embedding.weight ** 2, dim=1)
                     - 2 * torch.matmul(flat_input, self._embedding.weight.t()))

        # Encoding
        encoding_indices = torch.argmin(distances, dim=1).unsqueeze(1)
        encodings = torch.zeros(encoding_indices.shape[0], self._num_embeddings)
        encodings.scatter_(1, encoding_indices, 1)

        # Quantize and unflatten
        quantized = torch.matmul(encodings, self._embedding.weight).view(input_shape)

        # Loss
        e_latent_loss = F.mse_loss(quantized.detach(), inputs)
        q_latent_loss = F.mse_loss(quantized, inputs.detach())
        loss = q_latent_loss + self._commitment_cost * e_latent_loss

        quantized = inputs + (quantized - inputs).detach()
        avg_probs = torch.mean(encodings, dim=0)
        perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-10)))

        # convert quantized from BHWC -> BCHW
        return loss, quantized.permute(0, 3, 1, 2).contiguous(), perplexity, encodings


class Model(nn.Module):
    def __init__(self, num_hiddens, num_embeddings, embedding_dim, commitment_cost):
        super(Model, self).__init__()
        self._encoder = nn.Sequential(nn.Conv2d(3, num_hiddens, 4, stride=2, padding=1), nn.ReLU(),
                                      nn.Conv2d(num_hiddens, num_hiddens, 3, padding=1))
        self._pre_vq_conv = nn.Conv2d(num_hiddens, embedding_dim, kernel_size=1, stride=1)
        self._vq_vae = VectorQuantizer(num_embeddings, embedding_dim, commitment_cost)
        self._decoder = nn.Sequential(nn.Conv2d(embedding_dim, num_hiddens, 3, padding=1), nn.ReLU(),
                                      nn.ConvTranspose2d(num_hiddens, 3, 4, stride=2, padding=1))

    def forward(self, x):
        z = self._encoder(x)
        z = self._pre_vq_conv(z)
        loss, quantized, perplexity, _ = self._vq_vae(z)
        x_recon = self._decoder(quantized)
        return loss, x_recon, perplexity


training_data = torch.rand(64, 3, 8, 8) - 0.5
data_variance = training_data.var().item()
training_loader = torch.utils.data.DataLoader(training_data, batch_size=16, shuffle=True)
model = Model(8, 16, 4, 0.25)
optimizer = optim.Adam(model.parameters(), lr=1e-3, amsgrad=False)
# %%
model.train()
train_res_recon_error = []
train_res_perplexity = []

for i in range(30):
    data = next(iter(training_loader))
    optimizer.zero_grad()

    vq_loss, data_recon, perplexity = model(data)
    recon_error = F.mse_loss(data_recon, data) / data_variance
    loss = recon_error + vq_loss
    loss.backward()

    optimizer.step()

    train_res_recon_error.append(recon_error.item())
    train_res_perplexity.append(perplexity.item())
