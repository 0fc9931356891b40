"""The web page as a person uses it, in a real browser: Playwright driving Debian's Chromium headless against a real
uvicorn server. Asserts what is seen (spans highlighted by assertion status, the panel filled, the slider changing
what is NIL, the downloads); screenshots go to artefacts/web-page/ (not in git).

Skipped, with a message, where Chromium is absent: .ci/run installs it (apt-get install chromium).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import httpx
import pytest

from medlink.serve.app import create_app
from medlink.serve.settings import ServeSettings
from tests.serve_support import clinic_index, serving

CHROMIUM = next((path for path in ("/usr/lib/chromium/chromium", shutil.which("chromium")) if path and Path(path).is_file()), None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's Chromium is not installed (apt-get install -y chromium; .ci/run installs it): no browser to drive"
)
playwright = pytest.importorskip("playwright.sync_api", reason="Playwright comes with the test extra: pip install -e '.[test]'")
expect = playwright.expect
SHOTS = Path(__file__).resolve().parents[1] / "artefacts" / "web-page"
NOTE = "Pt with hx of MI. Denies chest pain. Mother had breast cancer. Renal cyst and hepatc fibrosis seen."


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    return clinic_index(tmp_path_factory)


@pytest.fixture(scope="module")
def server(index):
    with serving(create_app(ServeSettings(index=str(index)))) as running:
        yield running


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def context(browser):
    opened = browser.new_context(viewport={"width": 1280, "height": 760}, accept_downloads=True)
    yield opened
    opened.close()


@pytest.fixture
def page(context, server):
    """The page as a person opens it: fresh for each test."""
    opened = context.new_page()
    opened.goto(server.url)
    expect(opened.locator("#index-info")).to_contain_text("310 concepts")
    yield opened
    opened.close()


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def span(page, text: str):
    return page.locator("#result mark.span", has_text=text)


def annotate(page, text: str) -> None:
    page.fill("#input", text)
    page.click("#run")
    expect(page.locator("#status")).to_contain_text("linked")


def set_threshold(page, value: float) -> None:
    """Move the slider as a person lets go of it: its value, then the input and change events."""
    page.eval_on_selector(
        "#nil", "(slider, value) => { slider.value = value; slider.dispatchEvent(new Event('input')); slider.dispatchEvent(new Event('change')); }", value
    )


def test_the_text_is_shown_with_its_spans_highlighted_by_assertion_status(page):
    annotate(page, NOTE)
    expect(span(page, "chest pain")).to_have_class(re.compile(r"\bstatus-absent\b"))
    expect(span(page, "breast cancer")).to_have_class(re.compile(r"\bstatus-someone_else\b"))
    expect(span(page, "MI")).to_have_class(re.compile(r"\bhistorical\b"))
    expect(span(page, "Renal cyst")).to_have_class(re.compile(r"\bstatus-present\b"))
    expect(span(page, "hepatc fibrosis")).to_have_class(re.compile(r"\bnil\b"))  # under the index's own threshold
    expect(page.locator("#result")).to_contain_text("Denies chest pain. Mother had")  # the text around the spans, as written
    shot(page, "text")


def test_clicking_a_span_fills_the_panel_with_candidates_explanation_and_record(page):
    annotate(page, NOTE)
    span(page, "chest pain").click()
    panel = page.locator("#panel")
    expect(panel).to_be_visible()
    expect(page.locator("#panel-title")).to_have_text("chest pain")
    expect(page.locator("#panel-why")).to_contain_text("linked to HP:0100749 (Chest pain) with probability")
    first = page.locator("#candidates tbody tr").first
    expect(first).to_contain_text("HP:0100749 Chest pain")
    expect(first.locator("td").nth(2)).to_have_text(re.compile(r"^[01]\.\d{3}$"))  # the probability
    expect(page.locator("#record")).to_contain_text("An unpleasant sensation in the chest.")
    expect(page.locator("#record")).to_contain_text("HP:0012531 Pain")  # its parent, named
    shot(page, "panel")


def test_the_slider_changes_what_is_nil(page):
    annotate(page, NOTE)
    expect(span(page, "hepatc fibrosis")).to_have_class(re.compile(r"\bnil\b"))
    set_threshold(page, 0.0)
    expect(page.locator("#nil-value")).to_have_text("0.00")
    expect(span(page, "hepatc fibrosis")).not_to_have_class(re.compile(r"\bnil\b"))
    expect(page.locator("#status")).to_contain_text("0 NIL")
    set_threshold(page, 1.0)
    expect(span(page, "hepatc fibrosis")).to_have_class(re.compile(r"\bnil\b"))
    expect(span(page, "Renal cyst")).not_to_have_class(re.compile(r"\bnil\b"))  # probability 1 reaches any threshold
    page.click("#nil-reset")
    expect(page.locator("#nil-value")).not_to_have_text("1.00")
    shot(page, "slider")


def test_mentions_are_linked_one_per_line(page):
    page.check("input[name=mode][value=mentions]")
    annotate(page, "heart attack\nkidny cysts\n")
    rows = page.locator("#result .mention-row")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("heart attack")
    expect(rows.nth(1).locator("mark")).to_have_class(re.compile(r"\bnil\b"))
    rows.nth(0).locator("mark").click()
    expect(page.locator("#candidates tbody tr")).not_to_have_count(0)
    with page.expect_download() as download:
        page.click("#downloads button[data-format=jsonl]")
    lines = Path(download.value.path()).read_text().splitlines()
    assert [json.loads(line)["mention"] for line in lines] == ["heart attack", "kidny cysts"]
    expect(page.locator("#downloads button[data-format=bioc]")).to_be_disabled()  # a document format: text only


def test_downloads_in_each_format(page):
    annotate(page, "Denies chest pain.")
    saved = {}
    for fmt in ("jsonl", "pubtator", "bioc"):
        with page.expect_download() as download:
            page.click(f"#downloads button[data-format={fmt}]")
        saved[fmt] = Path(download.value.path()).read_text()
    assert json.loads(saved["jsonl"])["annotations"][0]["ids"] == ["HP:0100749"]
    assert saved["pubtator"].splitlines()[2].split("\t")[3:] == ["chest pain", "", "HP:0100749"]
    assert "<collection>" in saved["bioc"] and "HP:0100749" in saved["bioc"]


def test_the_api_reference_lists_every_endpoint_offline(context, server):
    reference = context.new_page()
    reference.goto(f"{server.url}/docs")
    titles = reference.locator(".endpoint h2")
    expect(titles.first).to_have_text("POST /link")
    assert {"POST /annotate", "POST /ground", "POST /ground_multi", "GET /concepts/{concept_id}", "POST /admin/reload"} <= set(titles.all_inner_texts())
    expect(reference.locator(".endpoint").first).to_contain_text("mentions: [string")  # the request body, from the schema
    reference.close()


def test_with_an_api_key_the_first_request_leaves_the_threshold_to_the_index(browser, index, tmp_path):
    key = "web-page-test-key-0123456789"
    (tmp_path / "key").write_text(key)
    with serving(create_app(ServeSettings(index=str(index), api_key_file=str(tmp_path / "key")))) as running:
        opened = browser.new_context()
        page = opened.new_page()
        sent: list[dict] = []
        page.on("request", lambda asked: sent.append(asked.post_data_json) if asked.method == "POST" else None)
        page.goto(running.url)
        expect(page.locator("#index-info")).to_contain_text("needs an API key")  # /info refused: the index's threshold unknown
        page.fill("#input", NOTE)
        page.click("#run")
        expect(page.locator("#status")).to_contain_text("needs an API key")
        page.fill("#api-key", key)
        page.click("#run")
        expect(page.locator("#status")).to_contain_text("linked")
        expect(page.locator("#index-info")).to_contain_text("310 concepts")
        own = httpx.get(f"{running.url}/info", headers={"Authorization": f"Bearer {key}"}).json()["nil_threshold"]
        expect(page.locator("#nil-value")).to_have_text(f"{own:.2f}")
        assert len(sent) == 2 and all("nil_threshold" not in body for body in sent)  # not the slider's 0.5 before /info came
        opened.close()
