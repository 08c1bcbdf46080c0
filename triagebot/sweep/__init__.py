"""The flag sweep: compile each model under the baseline and every flag, in isolated children.

Importing this package does not import torch; the children and the warm parent do. The driver's
side: `plan` (a `SweepPlan`, and `plan_for` from `triagebot.toml`), `engine` (`run_sweep`,
`check_models`), `schedule` (which runs, in what order), `ladder` and `climb`
(the backend ladder), `tasks` (what a child is handed: a run's key and request), `pool` (the
parent's loop), `parent` (the warm parent), `resources` (workers, threads, memory), `lost` (a
child that gave no result), `stream` (the JSON Lines stream and `merge`) and `keeper` (where each
record goes), `progress` and `summary` (what a person sees), `command` (`triagebot sweep`). The
child's side, torch imported: `worker` (one task), `run` (one run), `backend` (the counting
backend), `judge` and `accuracy` (is the answer right), `recompiles` and `shapes` (the second
call), `calls`, `validation` (the probe), `environment`; `warm` is the parent's preload.

Errors meant for the user (`SweepError`, `StreamError`) are `triagebot.errors.TriagebotError`s
with one-line messages.
"""

from triagebot.errors import SweepError
from triagebot.sweep.engine import SweepResult, check_models, run_sweep
from triagebot.sweep.parent import start_parent
from triagebot.sweep.plan import SweepPlan
from triagebot.sweep.progress import NullProgress, Progress
from triagebot.sweep.schedule import CHECK_CONFIG
from triagebot.sweep.stream import StreamError, merge, read_stream

__all__ = [
    "CHECK_CONFIG",
    "NullProgress",
    "Progress",
    "StreamError",
    "SweepError",
    "SweepPlan",
    "SweepResult",
    "check_models",
    "merge",
    "read_stream",
    "run_sweep",
    "start_parent",
]
