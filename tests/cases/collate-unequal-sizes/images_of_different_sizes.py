%%gradcheck
batch = next(iter(train_dl))
print(batch["image"].shape)
