"""The channels family: a convolution given an input whose dimension 1 is not the layer's number of input
channels (conv-channels) -- images laid out channels-last (H, W, C) as PIL, NumPy and OpenCV give them, one
image without its batch dimension, a batch of one-channel images without their channel dimension, grayscale
images for a color model, or a layer built for another channel count.

Reads the message (message.py), the failing op's input and weight as the run recorded them (shapes
only) and the argument on the error line that holds the input (culprit.py); the fix moves the channels to
dimension 1 where that line passes the tensor, when the numbers make it certain (fix.py); the card: card.py.
"""
from . import card  # noqa: F401 -- registers the rule
