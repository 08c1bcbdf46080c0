"""`triagebot doctor` against the fake GitHub: a healthy deployment is all `ok`, and each trap
planted alone is named, with its fix, by the check it belongs to (exit 1); unseen is not a
failure, and nothing is written without --fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from climain import run_main
from fakegithub import ACTIONS_TOKEN, FakeGitHub, point_tracker_at, serve

from triagebot.tracker.deployment import WorkflowNeeds, without_comments, workflow_needs

ROOT = Path(__file__).resolve().parent.parent
REPO = "octo-org/triagebot"
LABELS = ("module: dynamo", "triagebot")
CONFIG = f'[tracker]\nrepo = "{REPO}"\n[store]\nbranch = "triagebot-data"\n'


@pytest.fixture
def fake():
    yield from serve(repo=REPO)


def healthy(fake: FakeGitHub) -> None:
    """Everything docs/deploy.md asks for, set."""
    state = fake.repos[REPO]
    state.workflows = {"ci.yml": "active", "nightly.yml": "active", "rerun-sweep.yml": "active"}
    state.secrets = {"TRIAGEBOT_TOKEN"}
    state.variables = {"TRIAGEBOT_SHARDS": "2"}
    state.pages = "workflow"
    state.runners = [(f"gpu-{n}", "online", ["self-hosted", "linux", "gpu"]) for n in (1, 2)]
    for label in LABELS:
        fake._label(REPO, label)
    fake.permissions[fake.bot] = "admin"


def doctor(fake, monkeypatch, capsys, tmp_path, *argv: str, config: str = CONFIG):
    point_tracker_at(fake, monkeypatch)
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    path = tmp_path / "triagebot.toml"
    path.write_text(config)
    options = ("--token", "bot-token", "-c", str(path), "--workflows", str(ROOT))
    return run_main(monkeypatch, capsys, "doctor", *options, *argv)


def lines(ran, status: str) -> list[str]:
    return [line for line in ran.out.splitlines() if line.startswith(status)]


def test_a_healthy_deployment_is_all_ok_and_nothing_is_written(fake, monkeypatch, capsys, tmp_path):
    healthy(fake)

    ran = doctor(fake, monkeypatch, capsys, tmp_path)

    assert ran.status == 0, ran
    checks = [line.split(":")[0].split(None, 1)[1] for line in ran.out.splitlines()]
    assert checks == [
        "config", "repository", "schedules", "token", "scopes", "role", "secrets", "variables",
        "labels", "data branch", "pages", "runners",
    ]  # fmt: skip
    assert lines(ran, "problem") == [] and lines(ran, "note") == []
    assert fake.writes == []
    assert "ok      token: writes as triagebot-bot" in ran.out
    listed = [path for _, path in fake.requests if path.endswith("/actions/variables")]
    assert len(listed) == 1  # one listing serves both the variables and the runners' shards


def plant_fork(fake):
    fake.repos[REPO].fork = True
    fake.repos[REPO].workflows["nightly.yml"] = "disabled_fork"


def plant_inactive(fake):
    fake.repos[REPO].workflows["rerun-sweep.yml"] = "disabled_inactivity"


def plant_no_actions(fake):
    fake.repos[REPO].workflows = {}


def plant_classic_without_scope(fake):
    fake.scopes["bot-token"] = "read:org, gist"


def plant_fine_grained_on_a_user_s_repository(fake):
    fake.scopes.pop("bot-token")
    fake.repos[REPO].owner_type = "User"


def plant_no_role(fake):
    fake.permissions[fake.bot] = "read"


def plant_no_token_secret(fake):
    fake.repos[REPO].secrets = set()


def plant_wrong_secret_name(fake):
    fake.repos[REPO].secrets.add("TRIAGEBOT_TOKN")


def plant_mistyped_variable(fake):
    fake.repos[REPO].variables["TRIAGEBOT_SHARD"] = "4"


def plant_missing_label(fake):
    del fake.repos[REPO].labels["triagebot"]


def plant_protected_branch(fake):
    fake.repos[REPO].branches["triagebot-data"] = True


def plant_pages_off(fake):
    fake.repos[REPO].pages = None


def plant_pages_from_a_branch(fake):
    fake.repos[REPO].pages = "legacy"


def plant_runner_offline(fake):
    fake.repos[REPO].runners = [("gpu-1", "offline", ["self-hosted", "linux", "gpu"])]


def plant_runner_without_gpu_label(fake):
    fake.repos[REPO].runners = [("gpu-1", "online", ["self-hosted", "linux"])]


TRAPS = [
    (plant_fork, "schedules: nightly.yml is disabled_fork: no schedule fires", "enable workflows: a fork"),
    (plant_inactive, "schedules: rerun-sweep.yml is disabled_inactivity", "> Enable workflow"),
    (
        plant_no_actions,
        "schedules: nightly.yml is not a workflow of octo-org/triagebot, rerun-sweep.yml",
        "enable",
    ),
    (plant_classic_without_scope, "scopes: classic token without public_repo", "tick public_repo"),
    (
        plant_fine_grained_on_a_user_s_repository,
        "scopes: a fine-grained token of triagebot-bot",
        "classic token",
    ),
    (plant_no_role, "role: triagebot-bot has no Triage role", "add triagebot-bot as Write"),
    (plant_no_token_secret, "secrets: TRIAGEBOT_TOKEN is not set", "New repository secret TRIAGEBOT_TOKEN"),
    (plant_wrong_secret_name, "secrets: unknown secret 'TRIAGEBOT_TOKN'", "rename it"),
    (
        plant_mistyped_variable,
        "variables: unknown variable 'TRIAGEBOT_SHARD' (did you mean 'TRIAGEBOT_SHARDS'?)",
        "rename it",
    ),
    (plant_missing_label, "labels: missing on octo-org/triagebot: triagebot", "triagebot doctor --fix"),
    (plant_protected_branch, "data branch: triagebot-data is protected", "let GitHub Actions push"),
    (plant_pages_off, "pages: Pages is off", "Source: GitHub Actions"),
    (plant_pages_from_a_branch, "pages: Pages builds from gh-pages", "Source: GitHub Actions"),
    (plant_runner_offline, "runners: no runner online with gpu, linux, self-hosted", "register one"),
    (
        plant_runner_without_gpu_label,
        "runners: no runner online",
        "register one with gpu, linux, self-hosted",
    ),
]


@pytest.mark.parametrize(("plant", "said", "fix"), TRAPS, ids=[trap[0].__name__ for trap in TRAPS])
def test_each_planted_trap_is_named_with_its_fix(fake, monkeypatch, capsys, tmp_path, plant, said, fix):
    healthy(fake)
    plant(fake)

    ran = doctor(fake, monkeypatch, capsys, tmp_path)

    assert ran.status == 1, ran
    (problem,) = lines(ran, "problem")
    assert problem.startswith(f"problem {said}"), problem
    assert fix in problem.split(" -> fix: ")[1]
    assert fake.writes == []


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ('[tracker]\nrepo = "your-org/your-fork"\n', "is the example's placeholder"),
        (f'[tracker]\nrepo = "{REPO}"\nrepos = 1\n', "unknown key 'tracker.repos'"),
    ],
)
def test_a_wrong_configuration_is_a_problem_and_the_rest_is_still_checked(
    fake, monkeypatch, capsys, tmp_path, config, said
):
    healthy(fake)

    ran = doctor(fake, monkeypatch, capsys, tmp_path, "--repo", REPO, config=config)

    assert ran.status == 1
    (problem,) = lines(ran, "problem")
    assert problem.startswith("problem config: ") and said in problem
    assert "ok      runners: 2 online" in ran.out


def test_the_example_copied_as_it_is_is_still_checked_for_its_other_settings(
    fake, monkeypatch, capsys, tmp_path
):
    healthy(fake)
    plant_protected_branch(fake)
    example = (ROOT / "triagebot.example.toml").read_text(encoding="utf-8")

    ran = doctor(fake, monkeypatch, capsys, tmp_path, "--repo", REPO, config=example)

    assert [line.split(":")[0] for line in lines(ran, "problem")] == ["problem config", "problem data branch"]


def test_what_the_token_may_not_see_is_said_not_failed(fake, monkeypatch, capsys, tmp_path):
    healthy(fake)
    fake.permissions[fake.bot] = "write"  # not an admin: secrets, variables, runners are hidden

    ran = doctor(fake, monkeypatch, capsys, tmp_path)

    assert ran.status == 0, ran
    unseen = lines(ran, "unseen")
    assert [line.split(":")[0] for line in unseen] == [
        "unseen  secrets",
        "unseen  variables",
        "unseen  runners",
    ]
    assert all("cannot see them, needs admin" in line for line in unseen)


def test_the_maintainer_s_own_account_and_fewer_runners_than_shards_are_notes(
    fake, monkeypatch, capsys, tmp_path
):
    healthy(fake)
    fake.repos[REPO].variables["TRIAGEBOT_SHARDS"] = "4"

    ran = doctor(fake, monkeypatch, capsys, tmp_path, "--maintainer", "Triagebot-Bot")
    cc = CONFIG + '[tracker.cc]\ncapture_scalar_outputs = ["triagebot-bot"]\n'
    copied = doctor(fake, monkeypatch, capsys, tmp_path, config=cc)

    assert copied.status == 0 and lines(copied, "note")[0] == (
        "note    token: writes as triagebot-bot, whom [tracker] cc copies -> fix: take triagebot-bot out of "
        "[tracker] cc (GitHub never notifies an account of its own mention)"
    )
    assert ran.status == 0, ran
    assert lines(ran, "note") == [
        "note    token: writes as triagebot-bot, the maintainer: issues and answers carry your name; "
        "your /rerun-sweep comments are still read",
        "note    runners: 2 online with gpu, linux, self-hosted: gpu-1, gpu-2; "
        "TRIAGEBOT_SHARDS=4 shards run 2 at a time",
    ]


def test_the_job_s_own_token_is_a_problem_and_the_rest_is_still_checked(fake, monkeypatch, capsys, tmp_path):
    """What the doctor workflow runs with when TRIAGEBOT_TOKEN is not set."""
    healthy(fake)
    fake.permissions["github-actions[bot]"] = "admin"

    ran = doctor(fake, monkeypatch, capsys, tmp_path, "--token", ACTIONS_TOKEN)

    assert ran.status == 1
    assert lines(ran, "problem") == [
        "problem token: the job's GITHUB_TOKEN: it cannot write the tracker's issues -> fix: "
        "store a token of the bot's account as the secret TRIAGEBOT_TOKEN"
    ]
    assert "ok      runners: 2 online" in ran.out


def test_a_check_github_refuses_is_unseen_and_the_others_still_run(fake, monkeypatch, capsys, tmp_path):
    healthy(fake)
    fake.inject("GET", r"/pages$", "error", status=403)

    ran = doctor(fake, monkeypatch, capsys, tmp_path)

    assert ran.status == 0, ran
    (unseen,) = lines(ran, "unseen")
    assert unseen.startswith("unseen  pages: the token may not look: read the Pages of octo-org/triagebot:")
    assert "ok      runners: 2 online" in ran.out


def test_fix_creates_the_missing_labels_and_nothing_else(fake, monkeypatch, capsys, tmp_path):
    healthy(fake)
    plant_missing_label(fake)
    plant_pages_off(fake)

    ran = doctor(fake, monkeypatch, capsys, tmp_path, "--fix")

    assert "ok      labels: created on octo-org/triagebot: triagebot" in ran.out
    assert fake.writes == [("POST", f"/repos/{REPO}/labels")]
    assert ran.status == 1  # Pages is still off: --fix does not touch settings


def test_a_repository_the_token_cannot_see_stops_the_checks_that_need_it(fake, monkeypatch, capsys, tmp_path):
    healthy(fake)

    ran = doctor(fake, monkeypatch, capsys, tmp_path, "--repo", "octo-org/elsewhere")

    assert ran.status == 1
    assert lines(ran, "problem") == [
        "problem repository: octo-org/elsewhere (runs the workflows): the token cannot see it -> fix: "
        "check the name (runs the workflows); give the token's account access to octo-org/elsewhere"
    ]


def test_without_a_token_or_a_repository_it_is_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    path = tmp_path / "triagebot.toml"
    path.write_text(CONFIG)

    no_token = run_main(monkeypatch, capsys, "doctor", "-c", str(path))
    no_repo = run_main(monkeypatch, capsys, "doctor", "-c", str(tmp_path / "missing.toml"), "--token", "t")

    assert (no_token.status, no_token.err) == (
        2,
        "triagebot: error: doctor needs the bot's token: --token TOKEN or $GITHUB_TOKEN\n",
    )
    assert no_repo.status == 2 and no_repo.err.startswith("triagebot: error: doctor: no tracker repository")
    wrong = run_main(monkeypatch, capsys, "doctor", "-c", str(path), "--token", "t", "--repo", "nope")
    assert (wrong.status, wrong.err) == (2, "triagebot: error: doctor: --repo 'nope' is not OWNER/NAME\n")


# --- what the workflows ask for, read once for doctor and the docs ---


def test_comments_are_not_read_as_settings():
    text = 'a: ${{ vars.A }} # vars.B\n# secrets.C\nb: "# vars.D" ${{ secrets.E }}\n'

    assert without_comments(text) == 'a: ${{ vars.A }} \n\nb: "# vars.D" ${{ secrets.E }}'


def test_the_shipped_workflows_ask_for_the_gpu_runner_and_two_schedules():
    needs = workflow_needs(ROOT)

    assert isinstance(needs, WorkflowNeeds)
    assert needs.runner_labels == {"self-hosted", "linux", "gpu"}
    assert needs.scheduled == ("nightly.yml", "rerun-sweep.yml")
    assert "TRIAGEBOT_TOKEN" in needs.named("secret") and "GITHUB_TOKEN" not in needs.settings
