"""Spinning Up's SAC: twin Q-functions with a deepcopy target (requires_grad False), the Bellman backup under
torch.no_grad(), a squashed-Gaussian actor with rsample and the tanh log-prob correction (`logp_pi -= ...`),
Q parameters frozen for the policy step, and a polyak update of the targets with p_targ.data.mul_/add_.

source: https://github.com/openai/spinningup/blob/master/spinup/algos/pytorch/sac/sac.py and core.py
(ReplayBuffer, MLPActorCritic, compute_loss_q, compute_loss_pi, update and the main loop kept as written,
including `q_params = itertools.chain(...)`; gym's Pendulum replaced by a numpy pendulum with the same dynamics,
256-unit layers at 16, batch 16, 40 env steps with updates every 10 after 10 = 30 updates).
"""
# %%
import itertools
from copy import deepcopy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions.normal import Normal
from torch.optim import Adam


class Pendulum:
    """Pendulum-v1's dynamics, reward and observation, without gym."""

    def __init__(self, seed=0):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.th, self.thdot = self.rng.uniform(-np.pi, np.pi), self.rng.uniform(-1, 1)
        return self._obs()

    def _obs(self):
        return np.array([np.cos(self.th), np.sin(self.th), self.thdot], dtype=np.float32)

    def step(self, a):
        u = float(np.clip(a[0], -2.0, 2.0))
        norm_th = ((self.th + np.pi) % (2 * np.pi)) - np.pi
        cost = norm_th ** 2 + 0.1 * self.thdot ** 2 + 0.001 * u ** 2
        self.thdot = np.clip(self.thdot + (3 * 10.0 / 2 * np.sin(self.th) + 3.0 * u) * 0.05, -8, 8)
        self.th = self.th + self.thdot * 0.05
        return self._obs(), -cost, False, {}

    def sample_action(self):
        return self.rng.uniform(-2.0, 2.0, size=(1,)).astype(np.float32)


def combined_shape(length, shape=None):
    if shape is None:
        return (length,)
    return (length, shape) if np.isscalar(shape) else (length, *shape)


def mlp(sizes, activation, output_activation=nn.Identity):
    layers = []
    for j in range(len(sizes) - 1):
        act = activation if j < len(sizes) - 2 else output_activation
        layers += [nn.Linear(sizes[j], sizes[j + 1]), act()]
    return nn.Sequential(*layers)


LOG_STD_MAX = 2
LOG_STD_MIN = -20


class SquashedGaussianMLPActor(nn.Module):

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation, act_limit):
        super().__init__()
        self.net = mlp([obs_dim] + list(hidden_sizes), activation, activation)
        self.mu_layer = nn.Linear(hidden_sizes[-1], act_dim)
        self.log_std_layer = nn.Linear(hidden_sizes[-1], act_dim)
        self.act_limit = act_limit

    def forward(self, obs, deterministic=False, with_logprob=True):
        net_out = self.net(obs)
        mu = self.mu_layer(net_out)
        log_std = self.log_std_layer(net_out)
        log_std = torch.clamp(log_std, LOG_STD_MIN, LOG_STD_MAX)
        std = torch.exp(log_std)

        # Pre-squash distribution and sample
        pi_distribution = Normal(mu, std)
        if deterministic:
            pi_action = mu
        else:
            pi_action = pi_distribution.rsample()

        if with_logprob:
            logp_pi = pi_distribution.log_prob(pi_action).sum(axis=-1)
            logp_pi -= (2 * (np.log(2) - pi_action - F.softplus(-2 * pi_action))).sum(axis=1)
        else:
            logp_pi = None

        pi_action = torch.tanh(pi_action)
        pi_action = self.act_limit * pi_action
        return pi_action, logp_pi


class MLPQFunction(nn.Module):

    def __init__(self, obs_dim, act_dim, hidden_sizes, activation):
        super().__init__()
        self.q = mlp([obs_dim + act_dim] + list(hidden_sizes) + [1], activation)

    def forward(self, obs, act):
        q = self.q(torch.cat([obs, act], dim=-1))
        return torch.squeeze(q, -1)  # Critical to ensure q has right shape.


class MLPActorCritic(nn.Module):

    def __init__(self, obs_dim, act_dim, act_limit, hidden_sizes=(16, 16), activation=nn.ReLU):
        super().__init__()
        self.pi = SquashedGaussianMLPActor(obs_dim, act_dim, hidden_sizes, activation, act_limit)
        self.q1 = MLPQFunction(obs_dim, act_dim, hidden_sizes, activation)
        self.q2 = MLPQFunction(obs_dim, act_dim, hidden_sizes, activation)

    def act(self, obs, deterministic=False):
        with torch.no_grad():
            a, _ = self.pi(obs, deterministic, False)
            return a.numpy()


class ReplayBuffer:

    def __init__(self, obs_dim, act_dim, size):
        self.obs_buf = np.zeros(combined_shape(size, obs_dim), dtype=np.float32)
        self.obs2_buf = np.zeros(combined_shape(size, obs_dim), dtype=np.float32)
        self.act_buf = np.zeros(combined_shape(size, act_dim), dtype=np.float32)
        self.rew_buf = np.zeros(size, dtype=np.float32)
        self.done_buf = np.zeros(size, dtype=np.float32)
        self.ptr, self.size, self.max_size = 0, 0, size

    def store(self, obs, act, rew, next_obs, done):
        self.obs_buf[self.ptr] = obs
        self.obs2_buf[self.ptr] = next_obs
        self.act_buf[self.ptr] = act
        self.rew_buf[self.ptr] = rew
        self.done_buf[self.ptr] = done
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample_batch(self, batch_size=32):
        idxs = np.random.randint(0, self.size, size=batch_size)
        batch = dict(obs=self.obs_buf[idxs], obs2=self.obs2_buf[idxs], act=self.act_buf[idxs],
                     rew=self.rew_buf[idxs], done=self.done_buf[idxs])
        return {k: torch.as_tensor(v, dtype=torch.float32) for k, v in batch.items()}


seed = 0
torch.manual_seed(seed)
np.random.seed(seed)
env = Pendulum(seed)
obs_dim, act_dim, act_limit = 3, 1, 2.0
gamma, polyak, lr, alpha = 0.99, 0.995, 1e-3, 0.2
batch_size, start_steps, update_after, update_every, max_ep_len = 16, 20, 10, 10, 200
total_steps = 40

ac = MLPActorCritic(obs_dim, act_dim, act_limit)
ac_targ = deepcopy(ac)
# Freeze target networks with respect to optimizers (only update via polyak averaging)
for p in ac_targ.parameters():
    p.requires_grad = False
# List of parameters for both Q-networks (save this for convenience)
q_params = itertools.chain(ac.q1.parameters(), ac.q2.parameters())
replay_buffer = ReplayBuffer(obs_dim=obs_dim, act_dim=act_dim, size=1000)


def compute_loss_q(data):
    o, a, r, o2, d = data['obs'], data['act'], data['rew'], data['obs2'], data['done']
    q1 = ac.q1(o, a)
    q2 = ac.q2(o, a)
    # Bellman backup for Q functions
    with torch.no_grad():
        # Target actions come from *current* policy
        a2, logp_a2 = ac.pi(o2)
        # Target Q-values
        q1_pi_targ = ac_targ.q1(o2, a2)
        q2_pi_targ = ac_targ.q2(o2, a2)
        q_pi_targ = torch.min(q1_pi_targ, q2_pi_targ)
        backup = r + gamma * (1 - d) * (q_pi_targ - alpha * logp_a2)
    # MSE loss against Bellman backup
    loss_q1 = ((q1 - backup) ** 2).mean()
    loss_q2 = ((q2 - backup) ** 2).mean()
    loss_q = loss_q1 + loss_q2
    q_info = dict(Q1Vals=q1.detach().numpy(), Q2Vals=q2.detach().numpy())
    return loss_q, q_info


def compute_loss_pi(data):
    o = data['obs']
    pi, logp_pi = ac.pi(o)
    q1_pi = ac.q1(o, pi)
    q2_pi = ac.q2(o, pi)
    q_pi = torch.min(q1_pi, q2_pi)
    # Entropy-regularized policy loss
    loss_pi = (alpha * logp_pi - q_pi).mean()
    pi_info = dict(LogPi=logp_pi.detach().numpy())
    return loss_pi, pi_info


pi_optimizer = Adam(ac.pi.parameters(), lr=lr)
q_optimizer = Adam(q_params, lr=lr)


def update(data):
    # First run one gradient descent step for Q1 and Q2
    q_optimizer.zero_grad()
    loss_q, q_info = compute_loss_q(data)
    loss_q.backward()
    q_optimizer.step()

    # Freeze Q-networks so you don't waste computational effort computing gradients for them during the
    # policy learning step.
    for p in q_params:
        p.requires_grad = False

    # Next run one gradient descent step for pi.
    pi_optimizer.zero_grad()
    loss_pi, pi_info = compute_loss_pi(data)
    loss_pi.backward()
    pi_optimizer.step()

    # Unfreeze Q-networks so you can optimize it at next DDPG step.
    for p in q_params:
        p.requires_grad = True

    # Finally, update target networks by polyak averaging.
    with torch.no_grad():
        for p, p_targ in zip(ac.parameters(), ac_targ.parameters()):
            # NB: We use an in-place operations "mul_", "add_" to update target params, as opposed to
            # "mul" and "add", which would make new tensors.
            p_targ.data.mul_(polyak)
            p_targ.data.add_((1 - polyak) * p.data)


def get_action(o, deterministic=False):
    return ac.act(torch.as_tensor(o, dtype=torch.float32), deterministic)
# %%
o, ep_ret, ep_len = env.reset(), 0, 0
for t in range(total_steps):
    # Until start_steps have elapsed, randomly sample actions from a uniform distribution for better
    # exploration. Afterwards, use the learned policy.
    if t > start_steps:
        a = get_action(o)
    else:
        a = env.sample_action()

    o2, r, d, _ = env.step(a)
    ep_ret += r
    ep_len += 1
    d = False if ep_len == max_ep_len else d
    replay_buffer.store(o, a, r, o2, d)
    o = o2

    if d or (ep_len == max_ep_len):
        o, ep_ret, ep_len = env.reset(), 0, 0

    # Update handling
    if t >= update_after and t % update_every == 0:
        for j in range(update_every):
            batch = replay_buffer.sample_batch(batch_size)
            update(data=batch)
