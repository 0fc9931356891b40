"""The HTTP service as its clients meet it: a real uvicorn server on a loopback port, a real httpx client.

Every endpoint, the CLI's JSON through the API, Gilda's response shape, the API key, the limits (413 / 422 with a
message), bad input (4xx, never 500), a reload under load without a dropped request, SIGHUP and a graceful stop of
``medlink serve`` itself, and schemathesis fuzzing the served schema (a bounded number of examples here; the run of
1,000 requests and more is benchmarks/service/).
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from medlink.cli import command
from medlink.serve.app import create_app
from medlink.serve.gilda import bioregistry_url, gilda_id
from medlink.serve.settings import Limits, ServeSettings
from tests.serve_support import clinic_index, free_port, serving

KEY = "k" * 8 + "-test-key-0123456789"
TEXT = "Pt with hx of MI. Denies chest pain. Mother had breast cancer. Renal cyst seen."
GILDA_TERM_KEYS = {"norm_text", "text", "db", "id", "entry_name", "status", "source"}  # gilda.term.Term.to_json
GILDA_MATCH_KEYS = {"query", "ref", "exact", "space_mismatch", "dash_mismatches", "cap_combos"}  # gilda.scorer.Match.to_json


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    return clinic_index(tmp_path_factory)


@pytest.fixture(scope="module")
def server(index):
    with serving(create_app(ServeSettings(index=str(index), limits=Limits(max_body_bytes=200_000, max_mentions=50, max_documents=5)))) as running:
        yield running


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, timeout=60) as http:
        yield http


def cli_json_lines(*args: str) -> list[dict]:
    result = CliRunner().invoke(command(), list(args))
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


# -- the endpoints ----------------------------------------------------------------------------------


def test_link_answers_with_the_json_of_medlink_link(client, index):
    answer = client.post("/link", json={"mentions": ["heart attack", "kidny cysts", "   "], "top_k": 3})
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    assert answer.json() == cli_json_lines("link", "--index", str(index), "--json", "--top-k", "3", "heart attack", "kidny cysts", "   ")
    first, misspelt, blank = answer.json()
    assert first["candidates"][0]["id"] in ("ICD10CM:I21.9", "MESH:D009203") and first["nil"] is False
    assert misspelt["nil"] is True and blank["error"] == "empty mention"


def test_link_takes_context_a_threshold_and_explains(client):
    answer = client.post("/link", json={"mentions": [{"text": "kidny cysts", "left": "US: "}], "nil_threshold": 0.0, "explain": True, "top_k": 2})
    (result,) = answer.json()
    assert result["nil"] is False and result["nil_threshold"] == 0.0 and len(result["candidates"]) == 2
    assert result["why"].startswith("linked to ") and result["explanation"][0].startswith("kidny cysts: linked to")


def test_link_and_annotate_code_with_a_target_namespace_as_the_cli_does(client, index):
    body = {"mentions": ["heart attack", "kidney cyst"], "top_k": 2, "target_namespace": "ICD10CM"}
    answer = client.post("/link", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json() == cli_json_lines("link", "--index", str(index), "--json", "--top-k", "2", "--target-namespace", "ICD10CM",
                                           "heart attack", "kidney cyst")
    heart, _kidney = answer.json()
    assert heart["coding"]["namespace"] == "ICD10CM" and heart["coding"]["coded"] and heart["candidates"][0]["id"] == "ICD10CM:I21.9"
    annotated = client.post("/annotate", json={"text": TEXT, "target_namespace": "ICD10CM"}).json()
    mi = next(a for a in annotated[0]["annotations"] if a["text"] == "MI")
    assert mi["ids"] == ["ICD10CM:I21.9"]  # the plain answer may be MeSH's: coded, it is ICD-10-CM's
    unknown = client.post("/link", json={**body, "target_namespace": "SNOMEDCT"})
    assert unknown.status_code == 422 and "no SNOMEDCT code" in unknown.json()["detail"]
    assert client.post("/link", json={**body, "target_namespace": "../etc"}).status_code == 422


def test_annotate_answers_with_the_json_of_medlink_annotate(client, index):
    answer = client.post("/annotate", json={"text": TEXT})
    assert answer.status_code == 200
    assert answer.json() == cli_json_lines("annotate", "--index", str(index), "--json", "-q", TEXT)
    spans = {span["text"]: span for span in answer.json()[0]["annotations"]}
    assert spans["chest pain"]["ids"] == ["HP:0100749"] and spans["chest pain"]["infons"]["assertion"] == "absent"
    assert spans["breast cancer"]["infons"]["assertion"] == "someone_else" and spans["MI"]["infons"]["historical"] == "true"


def test_annotate_options_as_in_the_cli(client):
    plain = client.post("/annotate", json={"texts": ["Denies chest pain.", "Renal cyst."], "assertion": False, "top_k": 1}).json()
    assert [d["id"] for d in plain] == ["1", "2"]
    assert "assertion" not in plain[0]["annotations"][0].get("infons", {}) and len(plain[0]["annotations"][0]["candidates"]) == 1
    explained = client.post("/annotate", json={"text": "hepatc fibrosis", "explain": True}).json()[0]["annotations"][0]
    assert explained["ids"] == [] and explained["why"].startswith("NIL:")
    linked = client.post("/annotate", json={"text": "hepatc fibrosis", "nil_threshold": 0.0}).json()[0]["annotations"][0]
    assert linked["ids"] and linked["nil"] is False


def test_annotate_reads_documents_and_files_in_memory_and_writes_each_format(client):
    given = {"id": "d1", "text": "Renal cyst and kidny cysts.", "annotations": [{"start": 15, "end": 26}]}
    spans = client.post("/annotate", json={"documents": [given], "finder": "given", "nil_threshold": 0.0}).json()[0]["annotations"]
    assert [(s["text"], s["source"]) for s in spans] == [("kidny cysts", "given")] and spans[0]["ids"]
    pubtator = "7|t|Chest pain\n7|a|Denies chest pain.\n\n"
    bioc = client.post("/annotate", json={"content": pubtator, "format": "pubtator", "output_format": "bioc"})
    assert bioc.headers["content-type"].startswith("application/xml") and "<id>7</id>" in bioc.text and "HP:0100749" in bioc.text
    tsv = client.post("/annotate", json={"text": "Denies chest pain.", "output_format": "pubtator"})
    assert tsv.text.splitlines()[2].split("\t") == ["1", "7", "17", "chest pain", "", "HP:0100749"]
    lines = client.post("/annotate", json={"content": "Chest pain.\nRenal cyst.\n", "format": "lines", "output_format": "jsonl"}).text
    assert [json.loads(line)["id"] for line in lines.splitlines()] == ["1", "2"]
    bad = client.post("/annotate", json={"content": "7|t|Chest pain\n7\tnot a line\n", "format": "pubtator"})
    assert bad.status_code == 422 and "the request's content" in bad.json()["detail"]


def test_concepts_search_health_info(client, index):
    record = client.get("/concepts/ICD10CM:I21.9").json()
    assert record["name"] == "Acute myocardial infarction, unspecified" and record["xrefs"] == ["MESH:D009203"]
    assert record["relations"] == [{"relation": "finding_site", "id": "MESH:D006321", "name": "Heart"}]
    assert {s["text"] for s in record["synonyms"]} >= {"Heart attack", "MI"}
    chest = client.get("/concepts/HP:0100749").json()
    assert chest["parents"] == [{"id": "HP:0012531", "name": "Pain"}] and chest["definition"].startswith("An unpleasant")
    assert client.get("/concepts/HP:0012531").json()["children"][0]["id"] in ("HP:0100749", "HP:0002315")
    moved = client.get("/concepts/HP:0001275").json()  # an alt id finds its concept
    assert (moved["id"], moved["asked"]) == ("HP:0001250", "HP:0001275")
    missing = client.get("/concepts/HP:9999999")
    assert missing.status_code == 404 and "HP:9999999" in missing.json()["detail"]
    hits = client.get("/search", params={"q": "heart", "limit": 3}).json()["hits"]
    assert hits[0]["id"] == "MESH:D006321" and len(hits) == 3
    health = client.get("/health").json()
    assert (health["status"], health["index"], health["reloads"]) == ("ok", str(index), 0) and health["loaded_at"] and health["index_created"]
    info = client.get("/info").json()
    assert info["kb"]["concepts"] == 310 and info["calibrated"] and 0 <= info["nil_threshold"] <= 1
    assert [g["name"] for g in info["generators"]][:2] == ["exact", "words"] and info["limits"]["max_mentions"] == 50
    assert {s["file"] for s in info["kb"]["sources"]} == {"organs.jsonl", "clinic.jsonl"} and info["api_key"] is False


def test_schema_reference_and_page_are_served_by_the_process(client):
    schema = client.get("/openapi.json").json()
    assert {"/link", "/annotate", "/concepts/{concept_id}", "/search", "/health", "/info", "/ground", "/ground_multi", "/admin/reload"} <= set(
        schema["paths"]
    )
    for path in ("/docs", "/", "/static/page.js", "/static/page.css", "/static/docs.js"):
        served = client.get(path)
        assert served.status_code == 200 and "https://" not in served.text and "http://" not in served.text, path  # nothing from elsewhere
    assert client.get("/static/..%2Fapp.py").status_code == 404 and client.get("/static/manifest.json").status_code == 404


# -- Gilda --------------------------------------------------------------------------------------------


def test_ground_answers_as_gilda(client):
    matches = client.post("/ground", json={"text": "heart attack", "context": "chest pain since morning", "organisms": ["9606"]}).json()
    assert matches and all(set(m) == {"term", "url", "score", "match"} for m in matches)
    assert set(matches[0]["term"]) == GILDA_TERM_KEYS and set(matches[0]["match"]) == GILDA_MATCH_KEYS
    top = matches[0]  # what Gilda's clients read: results[0]['term']['db'], ['id'], ['entry_name'], ['score']
    assert (top["term"]["db"], top["term"]["id"]) in (("ICD10CM", "I21.9"), ("MESH", "D009203")) and top["score"] == 1.0
    assert [m["score"] for m in matches] == sorted((m["score"] for m in matches), reverse=True)
    in_mesh = client.post("/ground", json={"text": "heart attack", "namespaces": ["MESH"]}).json()
    assert [m["term"]["id"] for m in in_mesh] == ["D009203"] and in_mesh[0]["url"] == "https://bioregistry.io/mesh:D009203"
    coded = client.post("/ground", json={"text": "heart attack", "namespaces": ["ICD-10-CM"]}).json()  # coding mode's codes
    assert [(m["term"]["db"], m["term"]["id"]) for m in coded][:1] == [("ICD10CM", "I21.9")] and coded[0]["score"] > 0
    assert client.post("/ground", json={"text": "kidny cysts"}).json() == []  # NIL: Gilda's "no grounding"


def test_ground_multi_keeps_the_order_and_writes_ids_as_gilda_does(client):
    answered = client.post("/ground_multi", json=[{"text": "seizures"}, {"text": "xqzt"}, {"text": "Type 2 diabetes mellitus"}]).json()
    assert len(answered) == 3 and answered[1] == []
    assert (answered[0][0]["term"]["db"], answered[0][0]["term"]["id"]) == ("HP", "HP:0001250")
    assert answered[0][0]["url"] == "https://bioregistry.io/hp:0001250" and answered[2][0]["term"]["id"] == "E11.9"
    assert client.post("/ground_multi", json=[]).json() == []


def test_the_namespace_mapping():
    assert gilda_id("HP:0001250") == ("HP", "HP:0001250") and gilda_id("DOID:1234") == ("DOID", "DOID:1234")
    assert gilda_id("MESH:D009203") == ("MESH", "D009203") and gilda_id("ICD10CM:I21.9") == ("ICD10CM", "I21.9")
    assert gilda_id("D009203") == ("MESH", "D009203") and gilda_id("114480") == ("OMIM", "114480") and gilda_id("C0001") == ("KB", "C0001")
    assert gilda_id("SCTID:22298006") == ("SNOMEDCT", "22298006") and bioregistry_url("KB", "C0001") is None


def test_a_namespace_filter_finds_the_db_an_answer_gave_and_its_aliases():
    from medlink.core import Candidate
    from medlink.serve.gilda import in_any

    snomed, hp, own = Candidate("SNOMEDCT_US:91175000", 1.0), Candidate("HP:0001250", 1.0, alt_ids=["MESH:D012640"]), Candidate("myid-7", 1.0)
    assert all(in_any(snomed, [n]).concept_id == "SNOMEDCT_US:91175000" for n in ("SNOMEDCT", "SNOMEDCT_US", "sctid"))
    assert in_any(hp, ["HPO"]).concept_id == "HP:0001250" and in_any(hp, ["hp"]).concept_id == "HP:0001250"
    shown = in_any(hp, ["MSH"])  # the id in that namespace shown first, the others kept as alt ids
    assert shown.concept_id == "MESH:D012640" and shown.alt_ids == ["HP:0001250"]
    assert in_any(own, ["KB"]).concept_id == "myid-7" and in_any(hp, ["ICD10CM"]) is None


def test_serve_refuses_an_index_it_cannot_load_before_starting_workers(tmp_path):
    for index in (tmp_path / "nope-index", tmp_path):
        started = subprocess.run([sys.executable, "-m", "medlink", "serve", "--index", str(index), "--workers", "2", "--port", str(free_port())],
                                 capture_output=True, text=True, timeout=120)
        assert started.returncode != 0 and "Traceback" not in started.stderr
        assert str(index) in started.stderr


@pytest.mark.slow  # a real 'medlink serve --workers 2' process: its workers' starts and index loads, twice
def test_a_reload_of_several_workers_checks_the_index_first_then_replaces_each(index, tmp_path):
    mine = tmp_path / "index"
    shutil.copytree(index, mine)
    (tmp_path / "key").write_text(KEY)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "medlink", "serve", "--index", str(mine), "--port", str(port), "--workers", "2", "--api-key-file", str(tmp_path / "key")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        fresh_connections = httpx.Limits(max_keepalive_connections=0)  # one kept-alive connection would always reach one worker
        auth = {"Authorization": f"Bearer {KEY}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60, headers=auth, limits=fresh_connections) as http:
            deadline = time.monotonic() + 180
            before = set()
            while len(before) < 2:  # both workers answered at least once
                try:
                    before.add(http.get("/health").json()["loaded_at"])
                except httpx.TransportError:
                    pass
                assert process.poll() is None and time.monotonic() < deadline, "medlink serve did not start two workers"
                time.sleep(0.05)
            largest = max((f for f in mine.iterdir() if f.is_file() and f.name != "manifest.json"), key=lambda f: f.stat().st_size)
            intact = largest.read_bytes()
            largest.write_bytes(intact[:-1])  # damaged: the workers keep the index they have
            refused = http.post("/admin/reload")
            assert refused.status_code == 503 and largest.name in refused.json()["detail"]
            largest.write_bytes(intact)
            started = http.post("/admin/reload")
            assert started.status_code == 202 and started.json()["reloaded"] is False and "loaded_at" in started.json()["detail"]
            fresh = 0
            while fresh < 10:  # ten answers in a row from workers that loaded the index after the reload
                try:
                    answer = http.get("/health").json()["loaded_at"]
                    fresh = fresh + 1 if answer not in before else 0
                except httpx.TransportError:
                    fresh = 0
                assert time.monotonic() < deadline + 180, "the workers were not replaced"
                time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def test_gildas_own_classes_read_the_answer(client):
    term_module = pytest.importorskip("gilda.term", reason="gilda is not installed here (pip install gilda==1.6.1, the peers extra)")
    match = client.post("/ground", json={"text": "seizures"}).json()[0]
    term = term_module.Term(**match["term"])
    assert term.get_curie() == "hp:0001250" and term.get_bioregistry_url() == match["url"]


# -- bad input, limits, auth ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, status, said",
    [
        (b'{"mentions": ', 422, "not valid JSON"),
        (b'{"mentions": ["\xff\xfe"]}', 400, "not valid UTF-8"),
        (b"", 422, "Field required"),
        (b'{"mentions": "heart attack"}', 422, "body.mentions"),
        (b'{"mentions": [42]}', 422, "body.mentions.0"),
        (b'{"mentions": ["\\ud800"]}', 422, "lone surrogate"),
        (b'{"mentions": ["a"], "top_k": 0}', 422, "top_k"),
        (b'{"mentions": ["a"], "top_k": 51}', 422, "over the limit of 50 candidates"),
        (b'{"mentions": ["a"], "nil_threshold": 2}', 422, "nil_threshold"),
        (b'{"mentions": ["a"], "generators": ["nope"]}', 422, "unknown generator 'nope'"),
        (b'{"mentions": ["a"], "topk": 3}', 422, "topk"),
        (json.dumps({"mentions": ["a"] * 51}).encode(), 413, "51 mentions in one request, over the limit of 50"),
        (json.dumps({"mentions": ["a" * 1001]}).encode(), 413, "mention 1 has 1,001 characters"),
    ],
)
def test_bad_link_requests_get_a_4xx_with_a_message(client, body, status, said):
    answer = client.post("/link", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == status and said in answer.json()["detail"], answer.text


def test_annotate_limits_and_bad_documents(client):
    for body, status, said in [
        ({"texts": ["x"] * 6}, 413, "6 texts in one request, over the limit of 5"),
        ({"text": "a" * 200_001}, 413, "over the limit of 200,000 bytes"),
        ({"text": "x", "texts": ["y"]}, 422, "exactly one of text, texts, documents or content"),
        ({"documents": [{"txt": "x"}]}, 422, "document 1"),
        ({"text": "x", "finder": "tagger"}, 422, "body.finder"),
        ({"text": "x", "format": "pubtator"}, 422, "'format' is the format of 'content'"),
    ]:
        answer = client.post("/annotate", json=body)
        assert answer.status_code == status and said in answer.json()["detail"], answer.text
    streamed = client.post("/link", content=iter([b'{"mentions": ["', b"a" * 250_000, b'"]}']), headers={"content-type": "application/json"})
    assert streamed.status_code == 413  # no Content-Length: counted as it arrives


def test_the_api_key_guards_every_endpoint_but_health_page_and_reference(index, tmp_path):
    (tmp_path / "key").write_text(KEY + "\n")
    with serving(create_app(ServeSettings(index=str(index), api_key_file=str(tmp_path / "key")))) as running:
        with httpx.Client(base_url=running.url, timeout=60) as http:
            assert http.post("/link", json={"mentions": ["MI"]}).status_code == 401
            wrong = http.post("/link", json={"mentions": ["MI"]}, headers={"Authorization": "Bearer " + KEY[:-1] + "x"})
            assert wrong.status_code == 401 and wrong.json()["detail"] == "the API key is not this service's"
            assert http.get("/concepts/HP:0100749").status_code == 401 and http.post("/ground", json={"text": "MI"}).status_code == 401
            assert http.post("/link", json={"mentions": ["MI"]}, headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
            assert all(http.get(path).status_code == 200 for path in ("/health", "/", "/docs", "/openapi.json"))
            assert http.post("/admin/reload").status_code == 401


def test_reload_needs_a_configured_key(client):
    refused = client.post("/admin/reload")
    assert refused.status_code == 403 and "--api-key-file" in refused.json()["detail"]


# -- reload, SIGHUP, graceful stop ------------------------------------------------------------------------


def test_reload_swaps_in_a_rebuilt_index_without_dropping_a_request(index, tmp_path):
    from medlink.kb.build import build_kb
    from medlink.linking.index import build_index

    mine = tmp_path / "index"
    shutil.copytree(index, mine)
    (tmp_path / "key").write_text(KEY)
    auth = {"Authorization": f"Bearer {KEY}"}
    with serving(create_app(ServeSettings(index=str(mine), api_key_file=str(tmp_path / "key")))) as running:
        statuses: list[int] = []
        stop = threading.Event()

        def hammer() -> None:
            with httpx.Client(base_url=running.url, timeout=60, headers=auth) as http:
                while not stop.is_set():
                    statuses.append(http.post("/link", json={"mentions": ["heart attack", "renal cyst"]}).status_code)

        workers = [threading.Thread(target=hammer) for _ in range(3)]
        for worker in workers:
            worker.start()
        with httpx.Client(base_url=running.url, timeout=120, headers=auth) as http:
            assert "HP:0001997" not in {c["id"] for c in http.post("/link", json={"mentions": ["gout"]}).json()[0]["candidates"]}
            (tmp_path / "gout.jsonl").write_text('{"id": "HP:0001997", "name": "Gout"}\n')
            build_kb(tmp_path / "kb.sqlite", [f"jsonl:{tmp_path / 'gout.jsonl'}", f"jsonl:{index.parent / 'organs.jsonl'}"], progress=False)
            build_index(tmp_path / "kb.sqlite", mine, calibrate="none")  # rebuilt in place, as 'medlink index build' does
            reloaded = http.post("/admin/reload")
            time.sleep(0.3)
            stop.set()
            for worker in workers:
                worker.join()
            assert reloaded.status_code == 200 and reloaded.json()["reloaded"] is True
            assert http.post("/link", json={"mentions": ["gout"]}).json()[0]["candidates"][0]["id"] == "HP:0001997"
            assert http.get("/health").json()["reloads"] == 1
    assert len(statuses) > 10 and set(statuses) == {200}


@pytest.mark.slow  # a real 'medlink serve' process: its start-up and index load
def test_medlink_serve_reloads_on_sighup_and_finishes_requests_in_flight_when_stopped(index):
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "medlink", "serve", "--index", str(index), "--port", str(port), "--max-documents", "40"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, timeout=120) as http:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if http.get("/health").status_code == 200:
                        break
                except httpx.TransportError:
                    assert process.poll() is None and time.monotonic() < deadline, "medlink serve did not start"
                    time.sleep(0.1)
            process.send_signal(signal.SIGHUP)
            while http.get("/health").json()["reloads"] == 0:
                assert time.monotonic() < deadline + 60, "SIGHUP did not reload the index"
                time.sleep(0.1)
            answers: list[httpx.Response] = []
            slow = threading.Thread(target=lambda: answers.append(http.post("/annotate", json={"texts": [TEXT * 20] * 40})))
            slow.start()
            time.sleep(0.3)  # the request is in flight
            process.send_signal(signal.SIGTERM)
            slow.join()
        assert process.wait(timeout=60) in (0, -signal.SIGTERM)  # uvicorn ends by re-raising the signal it stopped on
        assert answers[0].status_code == 200 and len(answers[0].json()) == 40
    finally:
        if process.poll() is None:
            process.kill()
        output = process.communicate()[0]
    assert "Waiting for" in output or "Shutting down" in output


# -- fuzzing ------------------------------------------------------------------------------------------


def test_schemathesis_finds_no_server_error(server, tmp_path):
    """A bounded run (the >= 1,000-request run is benchmarks/service/fuzz.py): every generated request gets an answer
    under 500, and each response fits the schema."""
    done = subprocess.run(
        [
            sys.executable, "-m", "schemathesis.cli", "run", f"{server.url}/openapi.json", "--max-examples", "5",
            "--checks", "not_a_server_error,response_schema_conformance", "--phases", "examples,fuzzing", "--no-color",
            "--seed", "51", "--generation-database", "none", "--exclude-path", "/admin/reload", "--request-timeout", "30",
        ],
        capture_output=True, text=True, timeout=180, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
