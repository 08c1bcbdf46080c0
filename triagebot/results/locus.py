"""Where a wrong result of `torch.compile` happens: what its reduction found (`reduce.wrong`).

Only `base` is imported, so that `runs.Reproduction` can carry it."""

from __future__ import annotations

from pydantic import Field

from triagebot.results.base import Record


class WrongLocus(Record):
    """A wrong result reduced below the whole model: the smallest submodule whose compiled output
    differs from eager's on the inputs it received in one eager run (captured with forward hooks),
    and, inside the graph Dynamo hands the backend for it, the first node whose value differs
    from the value eager computed at the same line of model code."""

    module: str  # the submodule's qualified name ("decoder.mid_block"); "" for the model itself
    module_class: str = ""  # its class ("MidBlock2D")
    modules_tried: int = 0  # submodules compiled alone to find it
    module_script: str = ""  # the standalone repro of the submodule alone (empty: none made)
    module_verified: bool = False  # that script ran and its compiled output differed from eager's
    detail: str | None = None  # how far the submodule's compiled output is from eager's
    # The FX level: the first graph node that differs, its op and the model code line it comes
    # from ("model.py:12 `return x * scale`"); None where the graph level was not reached.
    op: str | None = None
    line: str | None = None
    graph_nodes: int | None = None  # call nodes in the submodule's graph
    # The graph interpreted node by node is right and the Python code FX generated for it is
    # not: that node's generated line ("pow_1 = -1 ** to_1"); None otherwise.
    generated: str | None = None
    seconds: float = 0.0  # wall time of the whole reduction, child processes included
    complete: bool = True  # False: the time bound stopped it before the graph level
    notes: list[str] = Field(default_factory=list)  # why a level was not reached, in order

    @property
    def where(self) -> str:
        """The op and the line, as every surface names the place (`op` at `line`), else the module."""
        if self.op and self.line:
            return f"{self.op} at {self.line}"
        return self.op or self.line or (self.module or "the whole model")
