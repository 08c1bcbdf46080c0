"""The starting configuration (triagebot.example.toml) loads through the settings model, and
`triagebot config --check` names every wrong key or value, one line each, with exit 2."""

from __future__ import annotations

import re
from pathlib import Path

from climain import run_main

from triagebot.config import DEFAULT_FLAGS, config_problems, parse_config

EXAMPLE = Path(__file__).resolve().parent.parent / "triagebot.example.toml"


def uncommented(text: str) -> str:
    """The example with its optional settings switched on (`# key = ...` lines, `# [table]`)."""
    return re.sub(r"(?m)^# (\[\w+\]|\w+ = )", r"\1", text)


def test_the_example_loads_as_it_is_and_with_every_optional_setting_on():
    text = EXAMPLE.read_text()
    plain, full = parse_config(text, str(EXAMPLE)), parse_config(uncommented(text), str(EXAMPLE))

    assert plain.tracker.repo == "your-org/your-fork" and plain.store.branch == "triagebot-data"
    assert full.tracker.dashboard_url and full.tracker.cc
    # What it says the flags default to is what they default to.
    assert {name: flag.patch for name, flag in full.flags.items()} == {
        name: flag.patch for name, flag in DEFAULT_FLAGS.items()
    }
    assert "cc_routes" not in text  # nothing live that names people


def test_config_check_says_ok_for_the_example_once_its_repository_is_set(tmp_path, monkeypatch, capsys):
    mine = tmp_path / "triagebot.toml"
    mine.write_text(EXAMPLE.read_text().replace("your-org/your-fork", "octo-org/triagebot"))

    ran = run_main(monkeypatch, capsys, "config", "--check", "-c", str(mine))

    assert (ran.status, ran.out, ran.err) == (0, f"{mine}: ok\n", "")


def test_config_check_refuses_the_example_s_placeholder_repository(monkeypatch, capsys):
    ran = run_main(monkeypatch, capsys, "config", "--check", "-c", str(EXAMPLE))

    assert ran.status == 2 and ran.out == ""
    assert ran.err == (
        f"{EXAMPLE}: 'tracker.repo': 'your-org/your-fork' is the example's placeholder, "
        "not your repository's OWNER/NAME\n"
    )


def test_config_check_names_every_wrong_key_and_value_one_line_each(tmp_path: Path, monkeypatch, capsys):
    wrong = tmp_path / "triagebot.toml"
    wrong.write_text('[sweep]\njobz = 3\ntimeout = "x"\n[tracker]\nrepo = "nope"\n[dashbord]\n')

    ran = run_main(monkeypatch, capsys, "config", "--check", "-c", str(wrong))

    assert ran.status == 2 and ran.out == ""
    assert sorted(ran.err.splitlines()) == sorted(
        [
            f"{wrong}: unknown key 'sweep.jobz' (did you mean 'sweep.jobs'?)",
            f"{wrong}: 'sweep.timeout': input should be a valid number, not 'x'",
            f"{wrong}: 'tracker.repo': 'nope' is not OWNER/NAME",
            f"{wrong}: unknown key 'dashbord' (did you mean 'dashboard'?)",
        ]
    )
    assert config_problems(EXAMPLE) == [
        f"{EXAMPLE}: 'tracker.repo': 'your-org/your-fork' is the example's placeholder, "
        "not your repository's OWNER/NAME"
    ]


def test_config_check_of_a_missing_or_broken_file_is_one_line(tmp_path: Path, monkeypatch, capsys):
    broken = tmp_path / "broken.toml"
    broken.write_text("[tracker\n")
    monkeypatch.chdir(tmp_path)

    for argv, line in [
        (["-c", str(broken)], f"{broken}: not valid TOML: "),
        ([], "triagebot.toml: cannot read: No such file or directory"),
    ]:
        ran = run_main(monkeypatch, capsys, "config", "--check", *argv)
        assert ran.status == 2 and ran.out == "" and len(ran.err.splitlines()) == 1, ran
        assert ran.err.startswith(line)
