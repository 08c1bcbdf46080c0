"""The smallest repro: each verified reproduction reduced while it still raises its signature
(a stage beside the sweep: this package imports no torch itself, every probe is a child Python
that runs a candidate script, as `triagebot.reproduce` runs them).

- `edits.py`: the edits that make a spec smaller (fewer layers, stage depths, experts, heads,
  a smaller vocabulary, a shorter sequence, a mask left out), by the shrinker's rules and within
  its family's constraints;
- `search.py`: delta debugging over those edits;
- `towers.py`: what a child with transformers says of a spec: its config without defaults, and
  the sub-models of a composite that can stand alone;
- `graph.py`: the graph-level repro PyTorch's minifier writes for a failure in a backend
  (`TORCHDYNAMO_REPRO_AFTER`), verified alone;
- `wrong.py`: a wrong result at the default config reduced to where it happens: the smallest
  submodule whose compiled output differs on the inputs it saw in eager, its own standalone
  repro, and the graph node (op and model code line) whose value first differs from eager's;
- `reductions.py`: one reproduction reduced (`reduce_one`), and all of a snapshot's within a time
  bound per group and per night (`reduce_reproductions`).

The reduced script replaces `Reproduction.script` (it is verified: the run that kept it raised
the signature), and `Reproduction.reduction` records the reduced spec, the steps, and the
script's lines and seconds before and after; `Reproduction.graph` holds the minifier's repro.
"""

from triagebot.reduce.reductions import Bounds, reduce_one, reduce_reproductions

__all__ = ["Bounds", "reduce_one", "reduce_reproductions"]
