"""Coded results as a front end shows them: plain lines, ``--explain`` and JSON, each code with the path it took.

Why apart from ``output``: a coded candidate's story is its path (the concept it came from, the mapping and its
confidence, the refinements, a "code first" note), which the plain rendering of a link result has no place for. The
JSON is ``output.result_json``'s, the path in each candidate's evidence, plus a ``coding`` summary.
"""

from __future__ import annotations

from medlink.core import Candidate, LinkResult
from medlink.linking.coding import CODED, is_uncoded
from medlink.linking.output import decision_text, mention_heading, printable, result_json


def path_of(candidate: Candidate) -> dict | None:
    """The coding path a coded candidate carries (None for a candidate that is no code)."""
    return next((e[CODED] for e in candidate.evidence if CODED in e), None)


def path_text(candidate: Candidate) -> str:
    """The path in words: "from HP:0001658 Myocardial infarction (rank 1) by skos:exactMatch 1.00 (hpo_icd10cm.sssom.tsv)"."""
    path = path_of(candidate)
    if path is None:
        return "not a code"
    if path.get("how", "").startswith("direct"):
        text = "matched directly"
    else:
        text = (
            f"from {path['from']} {path.get('from_name') or ''} (rank {path['from_rank']}) by {path['mapping']} "
            f"{path['mapping_confidence']:.2f} ({path['mapping_source']})"
        )
    if path.get("reached"):
        text += f"; reached {path['reached']}, then " + "; ".join(path.get("refined", []))
    return text


def coded_decision(result: LinkResult) -> str:
    """The decision in one sentence: coded (to what, how sure, how reached) or NIL for coding (why)."""
    if is_uncoded(result):
        return f"NIL for coding: {result.error}; its candidates follow"
    if result.error or not result.candidates:
        return decision_text(result)
    return decision_text(result) + f", {path_text(result.candidates[0])}"


def coded_lines(result: LinkResult) -> list[str]:
    """Plain output: one tab-separated line per code (mention, rank, code, name, score, probability, its path); a mention
    NIL for coding says so, then lists the concepts it was linked to."""
    text = printable(result.mention.text)
    if result.error and not is_uncoded(result):
        return [f"{text!r}\terror: {result.error}"]
    if not result.candidates:
        return [f"{text}\t(no candidate)"]
    lines = [f"{text}\tNIL\t({coded_decision(result).removeprefix('NIL for coding: ')})"] if is_uncoded(result) else []
    if result.nil and not is_uncoded(result):
        lines.append(f"{text}\tNIL\t({decision_text(result)}; codes follow)")
    for rank, c in enumerate(result.candidates, 1):
        probability = f"\tp={c.probability:.3f}" if c.probability is not None else ""
        notes = [path_text(c)] if path_of(c) else [f"matched '{c.matched_name}'"]
        notes += [path_of(c)["code_first"]] if path_of(c) and path_of(c).get("code_first") else []
        lines.append(f"{text}\t{rank}\t{c.concept_id}\t{c.name}\t{c.score:.3f}{probability}\t({'; '.join(notes)})")
    return lines


def coded_explanation(result: LinkResult) -> list[str]:
    """``--explain``: the decision, then per code its probability, the alias the linker matched, and its whole path."""
    lines = [f"{mention_heading(result)}: {coded_decision(result)}"]
    for rank, c in enumerate(result.candidates, 1):
        probability = f"p={c.probability:.3f} " if c.probability is not None else ""
        lines.append(f"  {rank}. {c.concept_id} {c.name}: {probability}score {c.score:.3f}; matched '{c.matched_name}'")
        path = path_of(c)
        if path is None:
            continue
        lines.append(f"     path: {path_text(c)}")
        lines.extend(f"     {path[key]}" for key in ("manifestation", "code_first") if path.get(key))
    return lines


def coded_json(result: LinkResult, namespace: str, explain: bool = False) -> dict:
    """``output.result_json`` plus ``coding``: the namespace, whether a code was reached, and the first code's path."""
    payload = result_json(result, explain)
    first = path_of(result.candidates[0]) if result.candidates else None
    payload["coding"] = {"namespace": namespace, "coded": first is not None and not result.error, "path": first}
    if explain:
        payload["why"] = coded_decision(result)
    return payload
