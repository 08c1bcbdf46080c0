"""A second shape for a model's inputs, derived from its `InputSpec`s alone, to see it recompile.

Two rules, tried in order; each keeps what a multimodal recipe planted consistent or does not
apply:

1. **A longer sequence.** The sequence axis is axis 1 of each random `*input_ids` tensor
   (`input_ids`, `decoder_input_ids`): every random, ones or zeros input whose first two axes are
   that (batch, sequence) grows from S to S + S // 2 (its mask, token types, embeddings). Not
   when a literal-valued input spans a sequence axis: its values are placeholders (image tokens)
   whose count the model checks.
2. **A second batch row.** When every tensor input has the same leading axis B, each grows to
   B + 1: random, ones and zeros inputs by shape, literal-valued ones by repeating their first
   row, so that each row keeps its own placeholders, image sizes and grids.

Inputs whose leading axes differ (Qwen2-VL's flattened patches beside a batch of ids) get no
second shape. The eager run on the second shape decides whether it is one the model accepts.
"""

from __future__ import annotations

import copy

from triagebot.results import InputSpec

GROWABLE = frozenset({"randn", "randint", "ones", "zeros"})


def _longer_sequence(inputs: list[InputSpec]) -> tuple[list[InputSpec], str] | None:
    ids = [
        item
        for item in inputs
        if item.name.endswith("input_ids") and item.kind == "randint" and len(item.shape) == 2
    ]
    if not ids:
        return None
    axes = {(item.shape[0], item.shape[1]) for item in ids}
    lengths = {length for _, length in axes}
    for item in inputs:
        if item.kind == "values" and len(item.shape) >= 2 and item.shape[1] in lengths:
            return None  # planted placeholders: their count is the model's to check
    grown = []
    for item in inputs:
        if item.kind in GROWABLE and len(item.shape) >= 2 and (item.shape[0], item.shape[1]) in axes:
            length = item.shape[1]
            item = item.model_copy(
                update={"shape": [item.shape[0], length + max(1, length // 2), *item.shape[2:]]}
            )
        grown.append(item)
    change = ", ".join(f"{length} -> {length + max(1, length // 2)}" for length in sorted(lengths))
    return grown, f"sequence {change}"


def _second_row(inputs: list[InputSpec]) -> tuple[list[InputSpec], str] | None:
    tensors = [item for item in inputs if item.kind != "literal"]
    if not tensors or any(not item.shape for item in tensors):
        return None
    leading = {item.shape[0] for item in tensors}
    if len(leading) != 1:
        return None
    batch = leading.pop()
    grown = []
    for item in inputs:
        if item.kind == "literal":
            grown.append(item)
            continue
        update: dict = {"shape": [batch + 1, *item.shape[1:]]}
        if item.kind == "values":
            if not isinstance(item.values, list) or len(item.values) != batch or not batch:
                return None
            update["values"] = [*item.values, copy.deepcopy(item.values[0])]
        elif item.kind not in GROWABLE:
            return None
        grown.append(item.model_copy(update=update))
    return grown, f"batch {batch} -> {batch + 1}"


def second_shape(inputs: list[InputSpec]) -> tuple[list[InputSpec] | None, str]:
    """The inputs on a second shape and how they changed, or (None, why there is none)."""
    if not inputs:
        return None, "no inputs to reshape"
    for rule in (_longer_sequence, _second_row):
        made = rule(inputs)
        if made is not None:
            return made
    return None, "no second shape: inputs with different leading axes, or placeholders along the sequence"
