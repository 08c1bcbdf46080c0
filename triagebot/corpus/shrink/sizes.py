"""The sizes every tiny config shrinks to.

One width is used everywhere (`WIDTH`): projections between towers (`out_hidden_size`,
`projection_dim`, `encoder_hidden_size`, ...) then agree without knowing which key feeds which.
"""

WIDTH = 64
HEADS = 4
HEAD_DIM = WIDTH // HEADS
FFN = 128
VOCAB = 512
LAYERS = 2
EXPERTS = 4
IMAGE = 32
