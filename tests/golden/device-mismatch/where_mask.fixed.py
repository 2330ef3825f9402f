%%gradcheck
import torch

scores = torch.randn(4, 5, device="meta")  # "meta" stands in for "cuda" on this CPU-only machine
keep = torch.rand(4, 5, device=scores.device) > 0.2
masked = torch.where(keep, scores, torch.zeros_like(scores))
