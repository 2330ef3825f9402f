%%gradcheck
# backward() runs inside a helper defined in an earlier cell
w = torch.randn(3, 1, requires_grad=True)
fit_step(w, torch.randn(4, 3, requires_grad=True))
