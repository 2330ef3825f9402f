%%gradcheck
import torch
import torch.nn as nn

# NB: no GPU here: the allocator's message (c10/cuda/CUDACachingAllocator.cpp, torch 2.13) is raised by hand
# once the running total has kept three steps' graphs alive, as a real GPU would after many steps.
OOM = ("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which "
       "1.23 GiB is free. Including non-PyTorch memory, this process has 77.91 GiB memory in use. Of the "
       "allocated memory 76.50 GiB is allocated by PyTorch, and 1.02 GiB is reserved by PyTorch but "
       "unallocated. If reserved but unallocated memory is large try setting "
       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
       "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
torch.manual_seed(0)
model = nn.Linear(64, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.randn(512, 64)
total = 0
for step in range(8):
    batch = data[step * 64:(step + 1) * 64]
    loss = model(batch).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    total += loss
    if torch.is_tensor(total) and step == 3:
        raise torch.OutOfMemoryError(OOM)
