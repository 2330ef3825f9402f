# On this CPU-only machine, OnCuda stands in for a CUDA tensor: it says it is on cuda:0 and refuses .numpy()
# with the message torch 2.13 gives for a real one ("can't convert cuda:0 device type tensor to numpy...").
import torch

MESSAGE = ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
           "memory first.")


class OnCuda(torch.Tensor):
    @property
    def device(self):
        return torch.device("cuda", 0)

    def numpy(self, *, force=False):
        raise TypeError(MESSAGE)

    def cpu(self, *args, **kwargs):
        return self.as_subclass(torch.Tensor)


torch.manual_seed(0)
weights = torch.randn(8, 2).as_subclass(OnCuda).requires_grad_()  # a parameter on the GPU
