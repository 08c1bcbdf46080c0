import pytest

from triagebot.config import DEFAULT_FLAGS, ConfigError, load_config, parse_config
from triagebot.results import FlagSettings


def test_defaults_sweep_both_flags():
    config = parse_config("")
    assert config.flags == DEFAULT_FLAGS
    assert config.tracker.close_after == 2


def test_flags_table_replaces_defaults():
    config = parse_config("[flags.scalars]\ncapture_scalar_outputs = true\n")
    scalars = FlagSettings(patch={"capture_scalar_outputs": True}, when="graph_breaks")
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
