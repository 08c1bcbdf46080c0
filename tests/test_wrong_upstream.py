"""What to file upstream for a wrong result at the default config, as for a crash group: the
labels a PT2 triager would set, a search for known upstream issues by the op it reduces to, the
`/rerun-sweep link` that records one, and a bisection owed when it is new across missed nights;
several wrong results grouped by the op and code line they reduce to."""

from __future__ import annotations

from builders import SCALAR, night_of, ok, result, snapshot
from test_first_news import COSMOS, wrong, wrong_tonight

from triagebot.analysis.compiler_wrong import compiler_wrong_results, groups_of
from triagebot.analysis.triage import search_words
from triagebot.bisect.owed import owed_bisections
from triagebot.config import TrackerSettings
from triagebot.report.wrong_issue import compiler_wrong_body
from triagebot.results import (
    BASELINE,
    COMPILER_WRONG_ISSUE,
    Accuracy,
    AccuracyCheck,
    Check,
    Environment,
    Reproduction,
    WrongLocus,
    signature_id,
)
from triagebot.tracker.desired import desired_issues
from triagebot.tracker.rerun import known_groups
from triagebot.tracker.upstream import wanted

MUL = WrongLocus(module="block.scale", module_class="Scale", op="operator.mul", line="m.py:33 `x * g`")
NORM = WrongLocus(module="mid.norm", module_class="GroupNorm", op="torch.group_norm", line="n.py:7 `norm(x)`")


def repro(model: str, locus: WrongLocus | None = None) -> Reproduction:
    return Reproduction(
        flag=BASELINE, signature="WrongResult: sample", model=model, script="...", verified=True, locus=locus
    )


def night_of_three():
    """Three models wrong at baseline: two reduced to one multiplication, one to a group norm."""
    models, repros = [], []
    for model, locus in (("A", MUL), ("B", MUL), ("C", NORM)):
        models.append(
            result(
                model, ok(1, accuracy=wrong()), {SCALAR: ok(1)}, reruns={BASELINE: ok(1, accuracy=wrong())}
            )
        )
        repros.append(
            Reproduction(
                flag=BASELINE,
                signature="WrongResult: sample",
                model=model,
                script="...",
                verified=True,
                locus=locus,
            )
        )
    return snapshot(models, checks=[Check.accuracy], reproductions=repros)


def test_several_are_grouped_by_the_op_and_code_line_they_reduce_to():
    groups = groups_of(compiler_wrong_results(night_of_three()))
    assert [group.models for group in groups] == [["A", "B"], ["C"]]
    assert groups[0].signature == "WrongResult: operator.mul at m.py:33"


def test_each_group_has_a_triagers_labels_a_search_and_the_link_command():
    night = night_of(night_of_three())
    group = night.compiler_wrong.groups[0]
    triage = night.compiler_wrong.triage_of(group)
    assert triage is not None
    assert {"oncall: pt2", "module: correctness (silent)", "high priority"} <= set(triage.label_names)
    assert search_words(group) == ["mul", "wrong"]
    assert wanted(night)[group.signature] == ["mul", "wrong"]
    body = compiler_wrong_body(night)
    assert "**Labels a PT2 triager would set**" in body
    assert f"/rerun-sweep link {signature_id(group.signature)} #N" in body
    assert signature_id(group.signature) in known_groups(night.snapshot)


def test_its_issue_is_labelled_as_a_flag_issue_is():
    """`tracker.labels`, and with `tracker.triage_labels` its groups' suggested labels, once each."""
    night = night_of(night_of_three())

    def labels(settings: TrackerSettings) -> list[str]:
        (issue,) = [issue for issue in desired_issues(night, settings) if issue.flag == COMPILER_WRONG_ISSUE]
        return issue.labels

    assert labels(TrackerSettings()) == ["module: dynamo", "triagebot"]
    assert labels(TrackerSettings(triage_labels=True)) == [
        "module: dynamo", "triagebot", "oncall: pt2", "module: correctness (silent)", "high priority",
    ]  # fmt: skip


def test_the_issue_shows_the_smallest_repro_beside_the_model_level_one():
    locus = MUL.model_copy(update={"module_script": "MODULE = 'block.scale'\n", "module_verified": True})
    body = compiler_wrong_body(night_of(wrong_tonight(locus=locus)))
    smallest = body.index("The smallest repro that still differs: block.scale (Scale), verified")
    assert smallest < body.index(f"The model-level repro ({COSMOS}, verified)")
    assert "reduced to operator.mul at m.py:33" in body.replace("\\", "")


def test_a_wrong_result_new_across_missed_nights_owes_a_bisection():
    def night(key: str, check: AccuracyCheck, reruns):
        cosmos = result(COSMOS, ok(1, accuracy=check), {SCALAR: ok(1)}, reruns=reruns)
        repro = Reproduction(
            flag=BASELINE, signature="WrongResult: sample", model=COSMOS, script="s", verified=True
        )
        return snapshot(
            [cosmos],
            key=key,
            checks=[Check.accuracy],
            reproductions=[repro] if check.verdict == Accuracy.mismatch else [],
        ).model_copy(update={"environment": Environment(torch_version=key, torch_git_version=key[-8:])})

    right = AccuracyCheck(verdict=Accuracy.match)
    before = night("2.13.0.dev20261201", right, None)
    tonight = night("2.13.0.dev20261205", wrong(), {BASELINE: ok(1, accuracy=wrong())})
    (request,) = owed_bisections(tonight, before, None)
    assert (request.reproduction.signature, request.good, request.bad) == (
        "WrongResult: sample",
        "2.13.0.dev20261201",
        "2.13.0.dev20261205",
    )
    wrong_before = night("2.13.0.dev20261201", wrong(), {BASELINE: ok(1, accuracy=wrong())})
    assert owed_bisections(tonight, wrong_before, None) == []  # wrong before too: not new
    unchecked = before.model_copy(update={"checks": []})
    assert owed_bisections(tonight, unchecked, None) == []  # outputs not compared before: not known new
