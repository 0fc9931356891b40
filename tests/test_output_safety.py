"""An output is written only where the user pointed, replaces only an artefact medlink wrote, survives kills and
concurrent writers; configs and manifests cannot send reads or writes outside their folder; checkpoints cannot run code."""

import json
import os
import pickle
import shutil

import pytest

from medlink.directories import clean_stale, output_lock, replace_directory
from medlink.errors import MedlinkError
from medlink.inventory import claim
from medlink.kb.build import build_kb
from medlink.kb.store import KB
from medlink.linking.config import LinkerConfig
from medlink.linking.index import build_index
from medlink.linking.linker import Linker
from tests.conftest import FIXTURES, another_writer

DICTIONARY = f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}"
EXACT = LinkerConfig.from_dict({"generators": [{"name": "exact", "type": "exact"}]})


@pytest.fixture
def kb(tmp_path):
    build_kb(tmp_path / "kb.sqlite", [DICTIONARY], progress=False)
    return KB.open(tmp_path / "kb.sqlite")


def dead_pid() -> int:
    pid = 4_000_000
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid += 1


def test_a_folder_with_a_foreign_manifest_is_not_replaced(kb, tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    (app / "manifest.json").write_text("{}")  # a web app's manifest, not an index's
    (app / "main.js").write_text("x")
    with pytest.raises(MedlinkError, match="its manifest.json was not written by medlink"):
        build_index(kb, app, EXACT)
    assert sorted(p.name for p in app.iterdir()) == ["main.js", "manifest.json"]
    build_index(kb, tmp_path / "index", EXACT)
    build_index(kb, tmp_path / "index", EXACT)  # an earlier index is replaced
    assert Linker.load(tmp_path / "index").link(["tumour"], k=1)[0].candidates


def test_an_index_folder_holding_a_users_file_is_not_replaced(kb, tmp_path):
    index = tmp_path / "index"
    build_index(kb, index, EXACT)
    (index / "MY_NOTES.txt").write_text("mine")
    (index / "generators" / "exact" / "notes.md").write_text("mine too")
    with pytest.raises(MedlinkError, match=r"holds 2 file\(s\) medlink did not write there \(MY_NOTES.txt, generators/exact/notes.md\)"):
        build_index(kb, index, EXACT)
    assert (index / "MY_NOTES.txt").read_text() == "mine" and Linker.load(index).link(["tumour"], k=1)[0].candidates
    (index / "MY_NOTES.txt").unlink()
    (index / "generators" / "exact" / "notes.md").unlink()
    build_index(kb, index, EXACT)  # only what medlink wrote: replaced


def test_a_copied_index_manifest_does_not_make_a_folder_medlinks(kb, tmp_path):
    build_index(kb, tmp_path / "index", EXACT)
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(tmp_path / "index" / "manifest.json", project / "manifest.json")
    (project / "analysis.py").write_text("print(1)")
    with pytest.raises(MedlinkError, match=r"medlink did not write there \(analysis.py\)"):
        build_index(kb, project, EXACT)
    assert sorted(p.name for p in project.iterdir()) == ["analysis.py", "manifest.json"]


def test_an_index_from_before_file_records_is_judged_by_its_layout(kb, tmp_path):
    index = tmp_path / "index"
    build_index(kb, index, EXACT)
    (index / ".medlink-files.json").unlink()  # as an older medlink left it
    (index / "notes.txt").write_text("mine")
    with pytest.raises(MedlinkError, match=r"\(notes.txt\)"):
        build_index(kb, index, EXACT)
    (index / "notes.txt").unlink()
    build_index(kb, index, EXACT)


def test_kb_build_replaces_only_a_kb_and_never_its_own_source(kb, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    with pytest.raises(MedlinkError, match="exists and is not a medlink KB"):
        build_kb(notes, [DICTIONARY], progress=False)
    own = tmp_path / "own.txt"
    own.write_text("D1||heart attack\n")
    with pytest.raises(MedlinkError, match="is one of the sources being read"):
        build_kb(own, [f"biosyn:{own}"], progress=False)
    assert notes.read_text() == "mine" and own.read_text() == "D1||heart attack\n"
    build_kb(kb.path, [DICTIONARY], progress=False)  # a KB is replaced


def test_an_output_that_is_a_symlink_is_refused(kb, tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(MedlinkError, match="is a symbolic link"):
        build_index(kb, tmp_path / "link", EXACT)
    (tmp_path / "kb-link.sqlite").symlink_to(kb.path)
    with pytest.raises(MedlinkError, match="is a symbolic link"):
        build_kb(tmp_path / "kb-link.sqlite", [DICTIONARY], progress=False)
    assert not list(target.iterdir()) and not list(tmp_path.glob(".*.old"))


@pytest.mark.parametrize("name", ["../../x", "/absolute/x", ".hidden", "a/b", ""])
def test_a_generator_name_cannot_leave_the_index_folder(name):
    with pytest.raises(MedlinkError, match=r"generators\[0\]: 'name' must be a string matching"):
        LinkerConfig.from_dict({"generators": [{"name": name, "type": "exact"}]})


def test_manifest_tables_cannot_point_outside_the_index(kb, tmp_path):
    build_index(kb, tmp_path / "index", EXACT)
    manifest = json.loads((tmp_path / "index" / "manifest.json").read_text())
    manifest["tables"]["exact"] = "../../etc"
    (tmp_path / "index" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(MedlinkError, match="'tables' must map this config's generators"):
        Linker.load(tmp_path / "index")


def test_what_killed_runs_left_is_cleaned_and_a_stranded_index_put_back(kb, tmp_path):
    pid = dead_pid()
    stale = tmp_path / f".index.{pid}.tmp"
    stale.mkdir()
    (tmp_path / f".kb.sqlite.{pid}.tmp").write_text("half a KB")
    build_index(kb, tmp_path / "index", EXACT)
    build_kb(kb.path, [DICTIONARY], progress=False)
    assert not stale.exists() and not (tmp_path / f".kb.sqlite.{pid}.tmp").exists()
    os.replace(tmp_path / "index", tmp_path / f".index.{pid}.old")  # killed between setting the old index aside and moving the new one in
    clean_stale(tmp_path / "index")
    assert Linker.load(tmp_path / "index").link(["tumour"], k=1)[0].candidates


def test_a_rebuild_swaps_in_one_step(tmp_path, monkeypatch):
    import medlink.directories as directories

    exchanged = []
    real = directories._exchange
    monkeypatch.setattr(directories, "_exchange", lambda a, b: exchanged.append(real(a, b)) or exchanged[-1])
    monkeypatch.setattr(directories.os, "replace", lambda *a: pytest.fail("the old folder was moved aside: a kill here would leave none"))
    old, new = tmp_path / "index", tmp_path / ".index.1.tmp"
    for folder, text in ((old, "old"), (new, "new")):
        folder.mkdir()
        (folder / "marker").write_text(text)
    replace_directory(new, old)
    assert exchanged == [True] and (old / "marker").read_text() == "new" and not new.exists() and not list(tmp_path.glob(".*"))


def test_two_writers_of_one_output_are_refused_not_interleaved(kb, tmp_path):
    with another_writer(tmp_path / "index"):
        with pytest.raises(MedlinkError, match=rf"process {os.getpid()} \(.*, since .*\) is writing"):
            build_index(kb, tmp_path / "index", EXACT)
        assert not (tmp_path / "index").exists()  # refused before any work
    build_index(kb, tmp_path / "index", EXACT)  # the lock went with the first writer


def test_a_command_keeps_its_own_lock_through_its_final_write(kb, tmp_path):
    with output_lock(tmp_path / "index"):
        build_index(kb, tmp_path / "index", EXACT)  # the build's own lock, taken again for the swap: no refusal
    assert (tmp_path / "index" / "manifest.json").is_file() and not list(tmp_path.glob(".index.lock"))


def test_a_lock_a_killed_writer_left_is_taken_over(kb, tmp_path):
    (tmp_path / ".index.lock").write_text(f"{dead_pid()}\t2026-01-01 00:00:00\tmedlink index build --out index\n")
    build_index(kb, tmp_path / "index", EXACT)
    assert (tmp_path / "index" / "manifest.json").is_file() and not (tmp_path / ".index.lock").exists()


class Payload:
    """Unpickling it would create ``self.target``: the code a crafted checkpoint could run."""

    def __init__(self, target):
        self.target = str(target)

    def __reduce__(self):
        return (open, (self.target, "w"))


@pytest.mark.dense
def test_a_crafted_checkpoint_cannot_run_code(tmp_path):
    torch = pytest.importorskip("torch")
    from medlink.training.run import TrainingRun

    checkpoint = tmp_path / "model" / "checkpoint"
    checkpoint.mkdir(parents=True)
    claim(checkpoint, directory=True, create=True)  # as medlink records a checkpoint it writes
    (checkpoint / "state.json").write_text(json.dumps({"epoch": 0, "step": 1, "history": [], "fingerprint": None}))
    pwned = tmp_path / "pwned"
    (checkpoint / "trainer.pt").write_bytes(pickle.dumps({"optimizer": Payload(pwned)}))
    run = TrainingRun(tmp_path / "model", True, 13, False)
    run.state["fingerprint"] = {"config": {}, "examples": {}}

    class Model:
        precision = "fp32"
        model = torch.nn.Linear(2, 2)

    with pytest.raises(MedlinkError, match="not a checkpoint medlink wrote"):
        run.prepare(Model(), 1e-3, 0.1, 10, {}, {})
    assert not pwned.exists()


def test_a_file_of_another_format_is_refused_not_an_empty_kb(tmp_path):
    with pytest.raises(MedlinkError, match=r"desc_small.xml: no records read as obo; is it in the obo format\?"):
        build_kb(tmp_path / "kb.sqlite", [f"obo:{FIXTURES / 'mesh' / 'desc_small.xml'}"], progress=False)
    assert not (tmp_path / "kb.sqlite").exists()


@pytest.mark.slow
def test_eval_tune_and_pairs_outputs_replace_only_their_own_kind(kb, tmp_path):
    from tests.test_cli_kb import medlink

    build_index(kb, tmp_path / "index", EXACT)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "report.md").write_text("precious")
    dataset = f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}"
    refused = medlink("eval", "--index", tmp_path / "index", "--dataset", dataset, "--out", mine, check=False)
    assert refused.returncode == 2 and "is a folder that is not an eval report folder" in refused.stderr
    medlink("eval", "--index", tmp_path / "index", "--dataset", dataset, "--out", tmp_path / "report")
    medlink("eval", "--index", tmp_path / "index", "--dataset", dataset, "--out", tmp_path / "report")  # an earlier report is replaced
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    refused = medlink("tune", "--index", tmp_path / "index", "--dev", dataset, "--out", notes, check=False)
    assert refused.returncode == 2 and "exists and is not a config 'medlink tune' wrote" in refused.stderr
    hand_written = tmp_path / "mine.json"
    hand_written.write_text(json.dumps(EXACT.to_dict()))  # a config of the user's: 'generators', but no search recorded
    refused = medlink("tune", "--index", tmp_path / "index", "--dev", dataset, "--out", hand_written, check=False)
    assert refused.returncode == 2 and json.loads(hand_written.read_text()) == EXACT.to_dict()
    medlink("tune", "--index", tmp_path / "index", "--dev", dataset, "--out", tmp_path / "tuned.json")
    medlink("tune", "--index", tmp_path / "index", "--dev", dataset, "--out", tmp_path / "tuned.json")  # its own: replaced
    refused = medlink("eval", "--index", tmp_path / "index", "--dataset", dataset, "--baseline", tmp_path / "report", "--out",
                      tmp_path / "report", check=False)
    assert refused.returncode == 2 and "is the --baseline this run reads" in refused.stderr
    refused = medlink("train", "pairs", "--kb", kb.path, "--out", mine, check=False)
    assert refused.returncode == 2 and "is a folder that is not a pairs folder" in refused.stderr
    assert (mine / "report.md").read_text() == "precious" and notes.read_text() == "mine" and sorted(p.name for p in mine.iterdir()) == ["report.md"]


@pytest.mark.dense
def test_two_trainings_into_one_folder_are_refused(tmp_path):
    pytest.importorskip("torch")
    from medlink.training.run import TrainingRun

    with another_writer(tmp_path / "model"):
        with pytest.raises(MedlinkError, match="is writing"):
            TrainingRun(tmp_path / "model", False, 13, False)
    TrainingRun(tmp_path / "model", False, 13, False)._lock.close()


def test_an_output_in_a_new_folder_says_it_created_the_folder(tmp_path, caplog):
    """A mistyped --out folder is not created silently: the output lands, and a warning names the new folder."""
    from medlink.directories import replaced_file

    with caplog.at_level("WARNING", logger="medlink"):
        with replaced_file(tmp_path / "new" / "sub" / "out.jsonl") as out:
            out.write("{}\n")
    assert (tmp_path / "new" / "sub" / "out.jsonl").read_text() == "{}\n"
    assert f"created the folder {tmp_path / 'new' / 'sub'}" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="medlink"):
        with replaced_file(tmp_path / "new" / "sub" / "out.jsonl") as out:  # the folder is there now: nothing to say
            out.write("{}\n")
    assert "created the folder" not in caplog.text
    with caplog.at_level("WARNING", logger="medlink"):  # a KB build (staged, then renamed) says it too
        build_kb(tmp_path / "kbs" / "k.sqlite", [f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}"], progress=False)
    assert f"created the folder {tmp_path / 'kbs'}" in caplog.text


def test_a_file_medlink_adds_to_its_own_folder_is_replaced_with_it(kb, tmp_path):
    """What a later command writes into a folder medlink wrote (a span selector beside its tagger) is medlink's too."""
    from medlink.directories import write_atomic

    build_index(kb, tmp_path / "index", EXACT)
    write_atomic(tmp_path / "index" / "later.json", "{}")
    build_index(kb, tmp_path / "index", EXACT)
    assert not (tmp_path / "index" / "later.json").exists()


@pytest.mark.parametrize("marker", ["report.json", "pairs.json", "medlink_tagger.json"])
def test_a_copied_marker_without_medlinks_record_does_not_make_a_folder_replaceable(kb, tmp_path, marker):
    """A folder whose marker was copied from a real output (or written by an older medlink) and that holds the user's
    files: no record says medlink wrote them, so the folder is left whole."""
    from medlink.directories import require_replaceable

    folder = tmp_path / "project"
    (folder / "data").mkdir(parents=True)
    (folder / marker).write_text("{}")
    (folder / "data" / "records.csv").write_text("a,b\n")
    with pytest.raises(MedlinkError, match=r"holds no record of the files medlink wrote there .*data/records.csv"):
        require_replaceable(folder, marker, "an output")


@pytest.mark.dense
def test_a_training_output_is_never_the_model_it_trains_from_nor_a_folder_with_a_copied_marker(tmp_path):
    from medlink.training.run import check_training_output

    model = tmp_path / "model"
    model.mkdir()
    (model / "training.json").write_text("{}")
    with pytest.raises(MedlinkError, match="is the --model this run reads"):
        check_training_output(model, {"--model": model})
    (model / "config.json").write_text("{}")  # a folder with a copied training.json and the user's files
    with pytest.raises(MedlinkError, match=r"holds no record .*config.json"):
        check_training_output(tmp_path / "model")


def test_eval_tune_and_score_outputs_have_one_writer(kb, tmp_path):
    from tests.test_cli_kb import medlink

    build_index(kb, tmp_path / "index", EXACT)
    dataset = f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}"
    gold = FIXTURES / "eval" / "pubtator_small.txt"
    runs = {tmp_path / "report": ["eval", "--index", tmp_path / "index", "--dataset", dataset, "--out", tmp_path / "report"],
            tmp_path / "index": ["tune", "--index", tmp_path / "index", "--dev", dataset, "--apply"],
            tmp_path / "errors.jsonl": ["score", "--gold", gold, "--predicted", gold, "--errors", tmp_path / "errors.jsonl"]}
    for output, command in runs.items():
        with another_writer(output):
            refused = medlink(*command, check=False)
        assert refused.returncode == 2 and "is writing" in refused.stderr, (command, refused.stderr)
        medlink(*command)  # the first writer gone: it runs


def test_a_folder_holding_only_a_copied_manifest_is_not_an_index(kb, tmp_path):
    build_index(kb, tmp_path / "index", EXACT)
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(tmp_path / "index" / "manifest.json", project / "manifest.json")
    with pytest.raises(MedlinkError, match="holds only a manifest.json"):
        build_index(kb, project, EXACT)
    assert [p.name for p in project.iterdir()] == ["manifest.json"]


def test_a_file_the_user_edited_inside_an_output_is_not_replaced(kb, tmp_path):
    index = tmp_path / "index"
    build_index(kb, index, EXACT)
    with open(index / "concept_names.txt", "a") as names:
        names.write("my note\n")
    with pytest.raises(MedlinkError, match=r"changed size since \(concept_names.txt\)"):
        build_index(kb, index, EXACT)
    assert (index / "concept_names.txt").read_text().endswith("my note\n")
