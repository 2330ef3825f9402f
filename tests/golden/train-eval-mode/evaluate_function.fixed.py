%%gradcheck
import torch.nn.functional as F


def evaluate(classifier, xs, ys):
    classifier.eval()
    with torch.inference_mode():
        logits = classifier(xs)
        return F.cross_entropy(logits, ys).item()


val_loss = evaluate(classifier, torch.randn(20, 6), torch.randint(0, 2, (20,)))
