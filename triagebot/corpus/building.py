"""What a suite's corpus module builds its models with, in one import.

Importing it imports `hf`, whose offline switches are set before any library reads them, so a
suite's module imports its own library after this one and never reaches the hub.
"""

from __future__ import annotations

from triagebot.corpus import Built
from triagebot.corpus.hf import MissingDependency, NoRecipe, count_params, describe_error, eager_run
from triagebot.corpus.inputs import import_object, materialize_inputs
from triagebot.results import InputSpec, ModelSpec

__all__ = [
    "Built",
    "InputSpec",
    "MissingDependency",
    "ModelSpec",
    "NoRecipe",
    "count_params",
    "describe_error",
    "eager_run",
    "import_object",
    "materialize_inputs",
]
