"""MkDocs hook: the site holds docs/ and BENCHMARKS.md; a page's link to another repository file becomes plain text.

The Markdown files link each other as a reader browsing the repository needs (``../BENCHMARKS.md``,
``../src/medlink/...``). The site has only docs/ and, as ``benchmarks.md``, BENCHMARKS.md. So a link to
BENCHMARKS.md goes to that page, a link from BENCHMARKS.md into docs/ goes to the page, and a link to any other
file outside docs/ keeps its text and names the path. Links inside docs/ are left to MkDocs, which checks them,
except in the benchmark records (BENCHMARKS.md, docs/benchmark-history.md), where a link to no file becomes its text.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File

BENCHMARKS = "BENCHMARKS.md"
PAGE = "benchmarks.md"
# records that other tools and people write: a link of theirs to no file becomes its text instead of failing the build
RECORDS = {PAGE, "benchmark-history.md"}
LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def _root(config) -> Path:
    return Path(config["config_file_path"]).resolve().parent


def _docs(config) -> Path:
    return Path(config["docs_dir"]).resolve()


def _rewrite(markdown: str, page_dir: str, root: Path, docs: Path, lenient: bool = False) -> str:
    """``markdown``'s links out of docs/, for a page whose folder (relative to the repository root) is ``page_dir``."""
    docs_rel = docs.relative_to(root).as_posix()
    from_docs = page_dir == docs_rel or page_dir.startswith(docs_rel + "/")
    site_dir = posixpath.relpath(page_dir, docs_rel) if from_docs else "."  # the page's folder in the site

    def replace(match: re.Match) -> str:
        text, target = match["text"], match["target"]
        if re.match(r"^[a-z][a-z0-9+.-]*:|^#|^/", target):  # a URL, an anchor on the page, an absolute path
            return match[0]
        path, _, anchor = target.partition("#")
        in_repo = posixpath.normpath(posixpath.join(page_dir, path))
        if in_repo == BENCHMARKS:
            in_site = PAGE
        elif in_repo.startswith(docs_rel + "/"):
            in_site = posixpath.relpath(in_repo, docs_rel)
            if not (docs / in_site).is_file() and lenient:
                return text
            if from_docs:
                return match[0]  # MkDocs checks the links between pages
        else:
            name = posixpath.basename(in_repo)
            return text if name and name in text else f"{text} (`{in_repo}`)"
        return f"[{text}]({posixpath.relpath(in_site, site_dir)}{'#' + anchor if anchor else ''})"

    out, in_fence = [], False
    for line in markdown.splitlines(keepends=True):
        if FENCE.match(line):
            in_fence = not in_fence
        out.append(line if in_fence else LINK.sub(replace, line))
    return "".join(out)


def on_files(files, config):
    """BENCHMARKS.md joins the site as ``benchmarks.md``, its links made to work from there."""
    root, docs = _root(config), _docs(config)
    source = root / BENCHMARKS
    if source.is_file() and files.get_file_from_path(PAGE) is None:
        content = _rewrite(source.read_text(encoding="utf-8"), ".", root, docs, lenient=True)
        files.append(File.generated(config, PAGE, content=content))
    return files


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == PAGE:
        return markdown
    root, docs = _root(config), _docs(config)
    page_dir = posixpath.dirname(posixpath.join(docs.relative_to(root).as_posix(), page.file.src_uri))
    return _rewrite(markdown, page_dir, root, docs, lenient=page.file.src_uri in RECORDS)
