import pytest

from triagebot.config import DEFAULT_FLAGS, load_config, parse_config, render_config
from triagebot.errors import ConfigError
from triagebot.results import FlagSettings


def test_defaults_sweep_both_flags():
    config = parse_config("")
    assert config.flags == DEFAULT_FLAGS
    assert config.tracker.close_after == 2


def test_flags_table_replaces_defaults():
    config = parse_config("[flags.scalars]\ncapture_scalar_outputs = true\n")
    scalars = FlagSettings(patch={"capture_scalar_outputs": True}, when="named_in_breaks")
    assert config.flags == {"scalars": scalars}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[sweep]\njobz = 2\n", "unknown key 'sweep.jobz'"),
        ("[swep]\n", "unknown key 'swep'"),
        ("[sweep]\njobs = 0\n", "'sweep.jobs'"),
        ("[sweep]\ndevice = 'tpu'\n", "'sweep.device'"),
        ("[flags]\nbaseline = {capture_scalar_outputs = true}\n", "reserved"),
        ("[flags.empty]\n", "patches nothing"),
        ("[sweep\n", "not valid TOML"),
    ],
)
def test_malformed_config_is_one_line_naming_the_key(text, message):
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_unknown_flag_selection_names_it():
    with pytest.raises(ConfigError, match="unknown flag 'nope'"):
        parse_config("").select_flags(["nope"])


def test_missing_file_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "absent.toml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[sweep]\njobz = 2\n", "unknown key 'sweep.jobz' (did you mean 'sweep.jobs'?)"),
        ("[tracker]\ntitel = 'x'\n", "unknown key 'tracker.titel' (did you mean 'tracker.title'?)"),
        ("[sweep]\njobs = '2'\n", "'sweep.jobs': expected a number of workers (1 or more) or \"auto\""),
        (
            "[tracker]\ncommands_on_edited = 'yes'\n",
            "'tracker.commands_on_edited': input should be a valid boolean",
        ),
        (
            "[tracker]\ntitle = '{flag}: {crash}'\n",
            "'tracker.title': unknown placeholder {crash} (known: {flag}, ",
        ),
        ("[tracker]\ntitle = '{flag'\n", "'tracker.title': '{flag': expected '}'"),
        ("[tracker]\ntitle = '{flag:d}'\n", "'tracker.title': '{flag:d}' cannot be filled in"),
        ("[tracker]\nrepo = 'pytorch'\n", "'tracker.repo': 'pytorch' is not OWNER/NAME"),
        ("[tracker]\ncc = {capture_scalar_outputs = ['a b']}\n", "'a b' is not a GitHub login or org/team"),
        ("[tracker]\ncc = {capture_scalar_output = ['ezyang']}\n", "did you mean 'capture_scalar_outputs'?"),
        ("[[tracker.cc_routes]]\npattern = '('\npeople = ['x']\n", "'(' is not a regular expression"),
        ("[[tracker.cc_routes]]\npattern = 'x'\npeople = ['@@x']\n", "'@@x' is not a GitHub login"),
        ('[flags."a b"]\ncapture_scalar_outputs = true\n', "flag name 'a b' may hold only"),
    ],
)
def test_config_is_checked_when_read(text, message):
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    assert message in str(caught.value)
    assert str(caught.value).startswith("triagebot.toml: ") and "\n" not in str(caught.value)


def test_a_value_from_the_command_line_is_named_by_its_option():
    with pytest.raises(ConfigError, match=r"^--repo: 'pytorch' is not OWNER/NAME$"):
        parse_config("", options={"--repo": "pytorch"})
    with pytest.raises(ConfigError, match=r"^triagebot.toml: 'tracker.repo': 'x' is not OWNER/NAME$"):
        parse_config("[tracker]\nrepo = 'x'\n", options={"--jobs": 3})
    config = parse_config("[tracker]\nrepo = 'a/b'\n", options={"--repo": "c/d", "--jobs": None})
    assert config.tracker.repo == "c/d" and config.sweep.jobs == 2


def test_sources_say_default_file_or_option(tmp_path):
    path = tmp_path / "triagebot.toml"
    path.write_text("[sweep]\njobs = 3\n[store]\nbranch = 'data'\n", encoding="utf-8")
    config = load_config(path, {"--device": "cpu", "--store": "snapshots"})
    sources = {key: source for key, _, source in config.sources()}
    assert sources["sweep.jobs"] == str(path)
    assert sources["sweep.device"] == "--device" and sources["store.path"] == "--store"
    assert sources["sweep.timeout"] == sources["flags"] == "default"
    assert config.store.branch is None  # --store is a plain folder
    assert config.where("sweep.device") == "--device" and config.where("sweep.jobs") == "sweep.jobs"
    text = render_config(config)
    assert "jobs = 3" in text and f"# {path}" in text and "# --device" in text
    assert parse_config(text).model_dump() == config.model_dump()  # it reads back as TOML


def test_cc_logins_lose_their_at_sign():
    config = parse_config("[tracker]\ncc = {capture_scalar_outputs = ['@ezyang', 'pytorch/dynamo']}\n")
    assert config.tracker.cc == {"capture_scalar_outputs": ["ezyang", "pytorch/dynamo"]}
