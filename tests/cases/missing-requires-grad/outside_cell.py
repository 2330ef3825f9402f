%%gradcheck
# The weights come from an earlier cell, created without requires_grad
features = torch.randn(5, 3)
score = (features @ weights).sigmoid().mean()
score.backward()
