"""triagebot: flag sweeps of torch.compile over a transformers corpus, and the issues they feed."""

__version__ = "0.1.0"
