%%gradcheck
import torch

# NB: no GPU here: torch < 2.1's allocator message, raised by hand where the big activation would go.
torch.manual_seed(0)
w = torch.randn(1024, 1024, requires_grad=True)
x = torch.randn(4096, 1024)
for _ in range(2):
    h = x @ w
    loss = h.square().mean()
    loss.backward()
    with torch.no_grad():
        w -= 1e-3 * w.grad
        w.grad.zero_()
    raise torch.OutOfMemoryError(
        "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.56 GiB already "
        "allocated; 3.12 MiB free; 14.73 GiB reserved in total by PyTorch) If reserved memory is >> allocated "
        "memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory "
        "Management and PYTORCH_CUDA_ALLOC_CONF")
