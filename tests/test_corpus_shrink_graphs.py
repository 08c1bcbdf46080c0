"""The slow tail's shrink keeps what the sweep measures: sentinel models of the families shrunk for
compile time, swept as the night sweeps them, compile to the graph counts and graph-break reasons
they had before their configs shrank. A rule that changes a model's graphs fails here.

The figures were recorded with torch 2.13.0 on the CPU and transformers 5.24.0: another version
may split these models differently without any rule changing, so the test says so and skips.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from triagebot.config import DEFAULT_FLAGS  # noqa: E402
from triagebot.corpus.hf import spec_for  # noqa: E402
from triagebot.results import BASELINE, Status  # noqa: E402
from triagebot.sweep import SweepPlan, read_stream, run_sweep  # noqa: E402

pytestmark = pytest.mark.slow

RECORDED_WITH = ("2.13.0", "5.24.0")
NONZERO = "Dynamic shape operator"  # the first line of each break reason, as Dynamo words it
ITEM = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
SCALAR = "Data dependent operator"
SCALARS, SHAPES = "capture_scalar_outputs", "capture_dynamic_output_shape_ops"

# model -> config -> (graphs, first lines of its break reasons), before the shrink
GRAPHS: dict[str, dict[str, tuple[int, list[str]]]] = {
    # the deformable attention's `.item()`: D-FINE's pyramid, CSP blocks and decoder shrank
    "DFineModel": {BASELINE: (9, [ITEM]), SCALARS: (1, []), SHAPES: (9, [ITEM])},
    # the patcher's `nonzero`: BLT's patcher, global and local decoder layers shrank
    "BltModel": {BASELINE: (5, [NONZERO]), SCALARS: (5, [NONZERO]), SHAPES: (4, [ITEM])},
    # per-expert `nonzero`: GLM-5 Next's Sinkhorn iterations shrank
    "Glm5NextTextModel": {BASELINE: (11, [NONZERO]), SCALARS: (11, [NONZERO]), SHAPES: (1, [])},
    # one Swin block per stage in OneFormer's backbone
    "OneFormerModel": {BASELINE: (15, [ITEM, NONZERO]), SCALARS: (7, [NONZERO]), SHAPES: (9, [ITEM])},
    # one DaViT block per stage in Florence-2's vision tower
    "Florence2ForConditionalGeneration": {BASELINE: (4, [ITEM]), SCALARS: (1, []), SHAPES: (4, [ITEM])},
    # one convolution block per stage in both of VibeVoice ASR's tokenizer encoders
    "VibeVoiceAsrModel": {BASELINE: (3, [NONZERO]), SCALARS: (3, [NONZERO]), SHAPES: (1, [])},
    # Nemotron 3.5 Transcribe's three audio towers shrank to one layer
    "Nemotron3_5TranscribeForConditionalGeneration": {
        BASELINE: (6, [NONZERO]),
        SCALARS: (6, [NONZERO]),
        SHAPES: (1, []),
    },
    # both towers of Gemma 4 (vision and audio) shrank to one layer
    "EmbeddingGemma2Model": {
        BASELINE: (7, [NONZERO, SCALAR]),
        SCALARS: (6, [NONZERO]),
        SHAPES: (4, [SCALAR]),
    },
}


def test_the_slow_tails_sentinels_keep_their_graphs_and_break_reasons(tmp_path):
    installed = (torch.__version__.split("+")[0], transformers.__version__)
    if installed != RECORDED_WITH:
        pytest.skip(f"graphs recorded with torch/transformers {RECORDED_WITH}, not {installed}: record again")
    out = tmp_path / "sweep.jsonl"
    specs = [spec_for(model) for model in GRAPHS]
    # every run made, where the night would skip some too: each recorded count is checked
    everywhere = {name: flag.model_copy(update={"when": "always"}) for name, flag in DEFAULT_FLAGS.items()}
    run_sweep(SweepPlan(specs, everywhere, out, corpus="transformers", device="cpu", jobs=2, timeout=600))
    _, records = read_stream(out)
    seen = {
        (record.model, record.config): (
            record.outcome.graphs,
            [r.splitlines()[0] for r in record.outcome.break_reasons],
        )
        for record in records
        if record.attempt == 0 and record.outcome.status == Status.ok
    }
    expected = {
        (model, config): kept for model, configs in GRAPHS.items() for config, kept in configs.items()
    }
    assert seen == expected
