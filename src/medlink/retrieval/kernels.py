"""The compiled kernels of ``compiled`` (numba, imported with this module: only for a large batch)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def kth_largest(scores, n):
    """The ``n``-th largest of ``scores`` (``np.partition``'s value; a quickselect on a copy, several times faster than
    numba's ``np.partition``)."""
    a = scores.copy()
    low, high, target = 0, len(a) - 1, len(a) - n  # the place it takes in ascending order
    while low < high:
        x, y, z = a[low], a[(low + high) >> 1], a[high]
        pivot = max(min(x, y), min(max(x, y), z))  # the median of three
        i, j = low, high
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if target <= j:
            high = j
        elif target >= i:
            low = i
        else:
            break
    return a[target]


@njit(cache=True, nogil=True)
def by_row(rows, scores):
    """(rows, scores) ordered by row, the rows distinct: one sort of (row, score bits) packed into 64 bits."""
    keys = np.empty(len(rows), np.int64)
    bits = scores.view(np.uint32)
    for j in range(len(rows)):
        keys[j] = (np.int64(rows[j]) << 32) | np.int64(bits[j])
    keys.sort()
    out_rows = np.empty(len(rows), rows.dtype)
    out_bits = np.empty(len(rows), np.uint32)
    for j in range(len(rows)):
        out_rows[j] = keys[j] >> 32
        out_bits[j] = keys[j] & 0xFFFFFFFF
    return out_rows, out_bits.view(scores.dtype)


@njit(cache=True, nogil=True)
def best_unordered(rows, scores, n):
    """``compiled.best``'s (row, score) pairs for distinct ``rows``, in no set order: the ``n`` highest-scoring, the
    lowest rows among equal scores at the cut."""
    if len(rows) <= n:
        return rows, scores
    cut = kth_largest(scores, n)
    kept_rows = np.empty(n, rows.dtype)
    kept_scores = np.empty(n, scores.dtype)
    tied = np.empty(len(rows), rows.dtype)
    count = 0
    n_tied = 0
    for j in range(len(rows)):
        if scores[j] > cut:
            kept_rows[count] = rows[j]
            kept_scores[count] = scores[j]
            count += 1
        elif scores[j] == cut:
            tied[n_tied] = rows[j]
            n_tied += 1
    for row in np.sort(tied[:n_tied])[: n - count]:
        kept_rows[count] = row
        kept_scores[count] = cut
        count += 1
    return kept_rows, kept_scores


@njit(cache=True, nogil=True)
def best_compiled(rows, scores, n):
    """``compiled.best`` for distinct ``rows``: the ``n`` highest-scoring rows, the lowest rows among equal scores at
    the cut, by row."""
    rows, scores = best_unordered(rows, scores, n)
    return by_row(rows, scores)


@njit(cache=True, nogil=True)
def ranked_order(concepts, priors, scores, k):
    """The first ``k`` positions by score, then prior (both highest first), then concept (lowest first): ``ranked``'s
    order, as stable sorts from the last key to the first."""
    order = np.argsort(concepts, kind="mergesort")
    order = order[np.argsort(-priors[order], kind="mergesort")]
    return order[np.argsort(-scores[order], kind="mergesort")][:k]


@njit(cache=True, nogil=True)
def hit_arrays(n, k):
    """Room for ``n`` queries' ``k`` hits each: concepts, scores, name rows (or aliases), priors."""
    return np.empty(n * k, np.int32), np.empty(n * k, np.float32), np.empty(n * k, np.int32), np.empty(n * k, np.float64)


@njit(cache=True, nogil=True)
def put(outputs, out, concepts, scores, rows, priors):
    """One query's hits written into ``outputs`` (``hit_arrays``) from position ``out``; the next free position."""
    n = len(concepts)
    outputs[0][out : out + n], outputs[1][out : out + n] = concepts, scores
    outputs[2][out : out + n], outputs[3][out : out + n] = rows, priors
    return out + n


@njit(cache=True, nogil=True)
def summed(i, queries, postings, sums, touched, order, positive):
    """Query ``i``'s weights times its columns' posting lists, summed per row in scipy's order (the query's entries as
    stored, then each list): the rows whose sum is non-zero (``positive``: above zero), with their sums. ``sums``,
    ``touched`` and ``order`` are scratch of one entry per row, left as they came (zeros, False)."""
    q_indptr, q_columns, q_weights = queries
    p_indptr, p_rows, p_values = postings
    count = 0
    for j in range(q_indptr[i], q_indptr[i + 1]):
        weight = q_weights[j]
        column = q_columns[j]
        for p in range(p_indptr[column], p_indptr[column + 1]):
            row = p_rows[p]
            if not touched[row]:
                touched[row] = True
                order[count] = row
                count += 1
            sums[row] += weight * p_values[p]
    rows = np.empty(count, np.int32)
    values = np.empty(count, np.float32)
    kept = 0
    for j in range(count):
        row = order[j]
        if sums[row] > 0 or (sums[row] != 0 and not positive):  # as scipy's product stores no zero
            rows[kept] = row
            values[kept] = sums[row]
            kept += 1
        sums[row] = 0
        touched[row] = False
    return rows[:kept], values[:kept]


@njit(cache=True, nogil=True)
def concept_hits(rows, values, names, concepts, priors, k, slot):
    """``hits.from_key_hits`` for one query: each concept's best row (score, then prior, then the first row), the
    concepts ranked by score, prior and position, the first ``k`` kept: (concepts, scores, rows, priors)."""
    size = names[rows + 1] - names[rows]
    total = int(size.sum())
    found = np.empty(total, np.int32)
    best_score = np.empty(total, np.float32)
    best_row = np.empty(total, np.int32)
    best_prior = np.empty(total, np.float64)
    count = 0
    for j in range(len(rows)):
        if values[j] <= 0:
            continue
        for at in range(names[rows[j]], names[rows[j] + 1]):
            concept = concepts[at]
            place = slot[concept]
            if place < 0:
                slot[concept] = count
                found[count], best_score[count], best_row[count], best_prior[count] = concept, values[j], rows[j], priors[at]
                count += 1
            elif values[j] > best_score[place] or (values[j] == best_score[place] and priors[at] > best_prior[place]):
                best_score[place], best_row[place], best_prior[place] = values[j], rows[j], priors[at]
    found, best_score, best_row, best_prior = found[:count], best_score[:count], best_row[:count], best_prior[:count]
    for concept in found:
        slot[concept] = -1
    order = ranked_order(found, best_prior, best_score, k)
    return found[order], best_score[order], best_row[order], best_prior[order]


@njit(cache=True, nogil=True)
def shortlists(queries, postings, common, table, common_position, n_common, n_names, rescored, shortlist, k, start, end):
    """TF-IDF's hits for queries ``start``-``end``: the selective n-grams' partial scores gathered in one array, the
    ``rescored`` best names' exact cosines (their common n-grams' part added), the ``shortlist`` best of those, then
    ``concept_hits``. A query with known n-grams but no selective one is flagged, not answered (``unselective``)."""
    q_indptr, q_indices, q_data = queries
    c_indptr, c_indices, c_data = common
    names, concepts, priors, n_concepts = table
    slot = np.full(n_concepts, -1, np.int64)
    partial = np.zeros(n_names, np.float32)
    touched = np.zeros(n_names, np.bool_)
    order = np.empty(n_names, np.int32)
    dense_common = np.zeros(n_common, np.float32)
    counts = np.zeros(end - start, np.int64)
    outputs = hit_arrays(end - start, k)
    unselective = np.zeros(end - start, np.bool_)
    out = 0
    for i in range(start, end):
        rows, values = summed(i, queries, postings, partial, touched, order, False)
        if len(rows) == 0:
            unselective[i - start] = q_indptr[i + 1] > q_indptr[i]
            continue
        rows, values = best_unordered(rows, values, rescored)  # each row rescored alone: no order needed yet
        for j in range(q_indptr[i], q_indptr[i + 1]):
            if common_position[q_indices[j]] >= 0:
                dense_common[common_position[q_indices[j]]] = q_data[j]
        for j in range(len(rows)):
            total = np.float32(0.0)
            for p in range(c_indptr[rows[j]], c_indptr[rows[j] + 1]):
                total += c_data[p] * dense_common[c_indices[p]]
            values[j] = values[j] + total
        for j in range(q_indptr[i], q_indptr[i + 1]):
            if common_position[q_indices[j]] >= 0:
                dense_common[common_position[q_indices[j]]] = 0
        rows, values = best_compiled(rows, values, shortlist)
        found = concept_hits(rows, values, names, concepts, priors, k, slot)
        counts[i - start] = len(found[0])
        out = put(outputs, out, *found)
    return counts, outputs[0][:out], outputs[1][:out], outputs[2][:out], outputs[3][:out], unselective


@njit(cache=True, nogil=True)
def word_hits(queries, words, table, fetch, k, start, end):
    """BM25's hits for queries ``start``-``end``: each query's word ids (a word as often as said, each weighing 1)
    summed over the word -> name score rows (``summed``), the positive names' ``fetch`` best, then ``concept_hits``."""
    names, concepts, priors, n_concepts = table
    slot = np.full(n_concepts, -1, np.int64)
    total = np.zeros(len(names) - 1, np.float32)
    touched = np.zeros(len(names) - 1, np.bool_)
    order = np.empty(len(names) - 1, np.int32)
    counts = np.zeros(end - start, np.int64)
    outputs = hit_arrays(end - start, k)
    out = 0
    for i in range(start, end):
        rows, values = summed(i, queries, words, total, touched, order, True)
        rows, values = best_compiled(rows, values, fetch)
        found = concept_hits(rows, values, names, concepts, priors, k, slot)
        counts[i - start] = len(found[0])
        out = put(outputs, out, *found)
    return counts, outputs[0][:out], outputs[1][:out], outputs[2][:out], outputs[3][:out]


@njit(cache=True, nogil=True)
def fused_hits(indptr, concepts, values, keys, stages, priors, n_concepts, k, start, end):
    """``Fusion.fuse`` for queries ``start``-``end``: ``indptr`` (stages x queries + 1) places each stage's hits in the
    concatenated arrays. Each concept's contributions summed largest first (equal ones in stage order), its alias and
    stage from the largest, its prior the highest; then ``concept_hits``' ranking, the first ``k`` kept."""
    n_stages = indptr.shape[0]
    slot = np.full(n_concepts, -1, np.int64)
    width = 0
    for i in range(start, end):
        size = 0
        for s in range(n_stages):
            size += indptr[s, i + 1] - indptr[s, i]
        width = max(width, size)
    found = np.empty(width, np.int32)
    held = np.zeros(width, np.int64)
    members = np.empty((width, n_stages), np.int64)
    counts = np.zeros(end - start, np.int64)
    out_concepts = np.empty((end - start) * k, np.int32)
    out_scores = np.empty((end - start) * k, np.float32)
    out_keys = np.empty((end - start) * k, np.int32)
    out_stages = np.empty((end - start) * k, np.int8)
    out_priors = np.empty((end - start) * k, np.float64)
    out = 0
    for i in range(start, end):
        distinct = 0
        for s in range(n_stages):
            for h in range(indptr[s, i], indptr[s, i + 1]):
                place = slot[concepts[h]]
                if place < 0:
                    place = distinct
                    slot[concepts[h]] = place
                    found[place] = concepts[h]
                    held[place] = 0
                    distinct += 1
                members[place, held[place]] = h
                held[place] += 1
        totals = np.empty(distinct, np.float32)
        firsts = np.empty(distinct, np.int64)
        best_priors = np.empty(distinct, np.float64)
        for place in range(distinct):
            group = members[place, : held[place]]
            for a in range(1, len(group)):  # largest contribution first; equal ones keep their stage order
                b = a
                while b > 0 and values[group[b]] > values[group[b - 1]]:
                    group[b], group[b - 1] = group[b - 1], group[b]
                    b -= 1
            total = values[group[0]]
            prior = priors[group[0]]
            for a in range(1, len(group)):
                total += values[group[a]]
                prior = max(prior, priors[group[a]])
            totals[place], firsts[place], best_priors[place] = np.float32(total), group[0], prior
            slot[found[place]] = -1
        mine = found[:distinct]
        order = ranked_order(mine, best_priors, totals, k)
        n = len(order)
        out_concepts[out : out + n], out_scores[out : out + n], out_priors[out : out + n] = mine[order], totals[order], best_priors[order]
        out_keys[out : out + n], out_stages[out : out + n] = keys[firsts[order]], stages[firsts[order]]
        counts[i - start] = n
        out += n
    return counts, out_concepts[:out], out_scores[:out], out_keys[:out], out_priors[:out], out_stages[:out]
