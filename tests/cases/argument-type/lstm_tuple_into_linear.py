%%gradcheck
model = Tagger()
tokens = torch.randint(0, 50, (4, 7))
tags = torch.randint(0, 5, (4, 7))
logits = model(tokens)
loss = nn.functional.cross_entropy(logits.flatten(0, 1), tags.flatten())
loss.backward()
