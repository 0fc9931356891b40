"""The README and the docs site: the site builds offline with warnings as errors, no sentence runs over 60 words, and the
README's first screen shows the install command, an ``annotate`` example and a ``link`` example."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
NOT_OURS = {"benchmark-history.md"}  # kept by the benchmarks' owners, by topic; its notes are records, not prose to read
MAX_WORDS = 60

FENCE = re.compile(r"^\s*(```|~~~)")
TABLE_ROW = re.compile(r"^\s*\|")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
HEADING = re.compile(r"^\s*#{1,6}\s")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
# a sentence ends at . ! or ? (a closing quote or bracket may follow) before white space and a capital, a digit, a quote
# or an opening bracket, or at the paragraph's end; "e.g. a", "vs. the" go on (a lower-case word follows)
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[*_])")


def paragraphs(markdown: str) -> list[str]:
    """The prose of a Markdown text, a paragraph (or list item, or heading) each: code blocks, tables, HTML comments and
    mkdocstrings' ``:::`` lines left out; lines of one paragraph joined."""
    markdown = HTML_COMMENT.sub(" ", markdown)
    out: list[str] = []
    current: list[str] = []
    in_fence = False

    def close():
        if current:
            out.append(" ".join(current))
            current.clear()

    for line in markdown.splitlines():
        if FENCE.match(line):
            close()
            in_fence = not in_fence
            continue
        if in_fence or TABLE_ROW.match(line) or line.lstrip().startswith(":::"):
            close()
            continue
        if not line.strip():
            close()
            continue
        if LIST_ITEM.match(line) or HEADING.match(line):
            close()
        current.append(line.strip())
    close()
    return out


def sentences(markdown: str) -> list[str]:
    """The sentences of a Markdown text's prose: a code span counts as one word, a link as its text."""
    found = []
    for paragraph in paragraphs(markdown):
        paragraph = CODE_SPAN.sub(lambda m: "CODE" if m.group(2).strip() else "", paragraph)
        paragraph = LINK.sub(r"\1", paragraph)
        paragraph = LIST_ITEM.sub("", paragraph, count=1)
        paragraph = HEADING.sub("", paragraph, count=1)
        found.extend(s.strip() for s in SENTENCE_END.split(paragraph) if s.strip())
    return found


def word_count(sentence: str) -> int:
    return sum(1 for token in sentence.split() if re.search(r"\w", token))


def long_sentences(markdown: str, limit: int = MAX_WORDS) -> list[tuple[int, str]]:
    return [(word_count(s), s) for s in sentences(markdown) if word_count(s) > limit]


def prose_files() -> list[Path]:
    return [README, *sorted(p for p in DOCS.glob("*.md") if p.name not in NOT_OURS)]


# --- the sentence splitter can fail -----------------------------------------------------------------------------------


def test_the_splitter_catches_a_long_sentence_and_passes_short_ones():
    long = "The " + " ".join(["word"] * 60) + "."
    short = "The " + " ".join(["word"] * 59) + "."
    assert [n for n, _ in long_sentences(f"Intro here. {long} Then more.")] == [61]
    assert long_sentences(f"Intro here. {short} Then more.") == []


def test_the_splitter_ends_sentences_where_a_reader_does():
    text = 'The index loads once. It links "MI" (e.g. as a short form). 3 tests pass! Does it? Yes: "it does."'
    assert sentences(text) == [
        "The index loads once.",
        'It links "MI" (e.g. as a short form).',
        "3 tests pass!",
        "Does it?",
        'Yes: "it does."',
    ]


def test_a_sentence_runs_over_the_lines_of_its_paragraph_but_not_past_it():
    wrapped = "\n".join([" ".join(["word"] * 20)] * 4) + "."  # 80 words over four lines: one sentence
    assert [n for n, _ in long_sentences(wrapped)] == [80]
    assert long_sentences(wrapped.replace("\n", "\n\n")) == []  # four paragraphs of 20 words
    items = "\n".join("- " + " ".join(["word"] * 20) for _ in range(4))  # list items are apart
    assert long_sentences(items) == []


def test_code_blocks_tables_and_code_spans_are_not_prose():
    words = " ".join(["word"] * 70)
    fenced = f"Short.\n\n```sh\n{words}\n```\n\n  ```\n  {words}\n  ```\n"
    table = f"| a | b |\n| --- | --- |\n| {words} | x |\n"
    span = "A flag `" + " ".join(["--x"] * 70) + "` counts as one word."
    assert long_sentences(fenced) == [] and long_sentences(table) == [] and long_sentences(span) == []
    assert word_count(sentences(span)[0]) == 7


# --- the README and the docs ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", prose_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_sentence_over_60_words(path):
    long = long_sentences(path.read_text(encoding="utf-8"))
    assert not long, f"{path.relative_to(ROOT)}: {len(long)} sentences over {MAX_WORDS} words:\n" + "\n".join(
        f"  {n} words: {s[:160]}..." for n, s in long
    )


def test_the_readme_first_screen_installs_annotates_and_links():
    first = README.read_text(encoding="utf-8").splitlines()[:40]
    commands = [line.strip() for line in first]
    assert 'pip install . && medlink annotate "Pt with hx of MI and T2DM, c/o chest pain and can\'t sleep."' in commands
    assert "pip install -e '.[test]' && python -m pytest -q" in commands  # .ci/run runs exactly this line
    assert any(re.match(r"medlink annotate ", c) for c in commands), "no `medlink annotate` example in the first 40 lines"
    assert any(re.match(r"medlink link ", c) for c in commands), "no `medlink link` example in the first 40 lines"
    assert any("medlink.link(" in line for line in first), "no `medlink.link(...)` example in the first 40 lines"


def test_the_ci_script_runs_the_readme_test_command():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -e '.[test]' && python -m pytest -q" in script
    assert "pip install -e '.[test]' && python -m pytest -q" in README.read_text(encoding="utf-8").splitlines()[:8]


def test_every_docs_page_is_in_the_site_navigation():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    missing = [p.name for p in DOCS.glob("*.md") if p.name not in config]
    assert not missing, f"docs pages not in mkdocs.yml's nav: {missing}"


# --- the site builds ----------------------------------------------------------------------------------------------------


def test_the_docs_site_builds_offline_with_warnings_as_errors(tmp_path):
    for module in ("mkdocs", "mkdocstrings", "mkdocstrings_handlers.python"):
        if importlib.util.find_spec(module.split(".")[0]) is None or importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (the test extra has it)")
    unreachable = "http://127.0.0.1:9"  # any download would fail: the build must need none
    env = {k: v for k, v in os.environ.items() if k.lower() != "no_proxy"}
    env.update(HTTP_PROXY=unreachable, HTTPS_PROXY=unreachable, http_proxy=unreachable, https_proxy=unreachable)
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    site = tmp_path / "site"
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("medlink.link", "medlink.annotate", "medlink.load_index", "LinkResult", "Linker", "MedlinkError"):
        assert name in api, f"the API reference lacks {name}"
    assert (site / "references" / "index.html").exists()


# --- the README's quickstart runs as written ----------------------------------------------------------------------------


def readme_blocks(language: str, section: str = "## Quickstart") -> list[str]:
    text = README.read_text(encoding="utf-8")
    start = text.index(section)
    end = text.find("\n## ", start + len(section))
    part = text[start : end if end != -1 else len(text)]
    return re.findall(rf"```{language}\n(.*?)```", part, flags=re.S)


@pytest.mark.slow
def test_the_readme_quickstart_runs_as_written(tmp_path):
    """Its shell lines, then its Python, in a fresh folder (the default index is the test run's own, built on first use)."""
    (shell,) = readme_blocks("sh")
    (python,) = readme_blocks("python")
    fixture = str(ROOT / "tests" / "fixtures" / "custom" / "terms.tsv")
    for line in shell.splitlines():
        command = line.split("  #")[0].strip().replace("tests/fixtures/custom/terms.tsv", fixture)
        if not command:
            continue
        result = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
    result = subprocess.run([sys.executable, "-c", python], cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Candidate(concept_id='HP:0001658'") and "Myocardial infarction" in lines[0]
    assert any(" MI " in line and line.endswith("present") for line in lines)
    assert any("chest pain" in line and line.endswith("absent") for line in lines)
    assert lines[-1].startswith("Candidate(concept_id='C1'")
