"""Training settings from a JSON file as well as flags: checked like a config, flags given win, the resolved settings recorded."""

import json

import pytest

from medlink.errors import MedlinkError
from medlink.params import read_settings_file
from medlink.training.trainer import TrainConfig
from tests.conftest import FIXTURES
from tests.test_cli_kb import medlink


def test_a_settings_file_is_checked_like_a_config(tmp_path):
    path = tmp_path / "train.json"
    path.write_text(json.dumps({"epochs": 3, "tau": 0.1}))
    assert read_settings_file(path, TrainConfig) == {"epochs": 3, "tau": 0.1}
    path.write_text(json.dumps({"epoch": 3}))
    with pytest.raises(MedlinkError, match=r"train.json: unknown key 'epoch'; known: epochs"):
        read_settings_file(path, TrainConfig)
    path.write_text(json.dumps({"epochs": "3"}))
    with pytest.raises(MedlinkError, match=r"train.json: 'epochs' must be an integer, not '3'"):
        read_settings_file(path, TrainConfig)
    path.write_text(json.dumps({"config": {"epochs": 2}, "epochs": [], "kb": {}}))  # a training.json: its 'config'
    assert read_settings_file(path, TrainConfig) == {"epochs": 2}


@pytest.mark.slow
def test_train_takes_a_config_file_and_flags_win(tmp_path):
    pytest.importorskip("torch")
    medlink("kb", "build", tmp_path / "kb.sqlite", f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}", "-q")
    (tmp_path / "train.json").write_text(json.dumps({"batch_size": 4, "max_steps_per_epoch": 1, "precision": "fp32", "seed": 3}))
    medlink("train", "bi-encoder", "--kb", tmp_path / "kb.sqlite", "--train", f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}",
            "--out", tmp_path / "model", "--config", tmp_path / "train.json", "--seed", "7")
    recorded = json.loads((tmp_path / "model" / "training.json").read_text())["config"]
    assert (recorded["batch_size"], recorded["max_steps_per_epoch"], recorded["seed"], recorded["epochs"]) == (4, 1, 7, 1)


@pytest.mark.parametrize("settings, message", [
    ({"epochs": 0}, "epochs (--epochs) must be at least 1, not 0"),
    ({"batch_size": 1}, "batch_size (--batch-size) must be at least 2, not 1"),
])
def test_values_out_of_range_are_refused_naming_the_file(settings, message, tmp_path):
    from medlink.cli.train_inputs import settings_from

    path = tmp_path / "train.json"
    path.write_text(json.dumps(settings))

    class Context:
        @staticmethod
        def get_parameter_source(name):
            return None  # no flag given on the command line

    with pytest.raises(MedlinkError, match=f"train.json: {message.replace('(', '[(]').replace(')', '[)]')}"):
        settings_from(Context(), TrainConfig, path, {"epochs": ("epochs", 1), "batch_size": ("batch_size", 64)})
