"""A search's sums over CSR matrices: scipy's products, or the same sums with numpy alone for a short call.

Why two: importing scipy.sparse was a sixth of a warm ``medlink link``, and a call of a few mentions needs only a few
posting lists and rows. ``ArraySums`` adds them up with numpy, one float32 add at a time in scipy's order (the query's
entries as given, then each list or row as stored; ``np.add.at`` adds in array order), so its numbers are scipy's and
the compiled kernels', to the bit. It is slower than scipy's C++ (a batch of a few hundred mentions takes half as many
a second, one mention at a time a third fewer), so only a process's first few calls of at most ``SHORT_CALL`` mentions
take it, while scipy is not imported.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np

from medlink.retrieval.csr_files import CsrArrays

if TYPE_CHECKING:
    import scipy.sparse as sp

SHORT_CALL = 8  # mentions a call may have and be summed without scipy (while scipy is not imported)
FIRST_CALLS = 8  # calls a process sums without scipy at most (a link's first one or two); later ones pay for its import
_calls_without_scipy = 0


def row_entries(matrix: CsrArrays | sp.csr_matrix, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of ``rows``' entries in ``matrix``'s arrays, row after row, and for each entry its place in ``rows``."""
    starts = matrix.indptr[rows].astype(np.int64)
    lengths = matrix.indptr[rows + 1] - starts
    owner = np.repeat(np.arange(len(rows)), lengths)
    return np.arange(len(owner)) + np.repeat(starts - (np.cumsum(lengths) - lengths), lengths), owner


class ArraySums:
    """The sums with numpy alone (see the module's docstring)."""

    sparse = False

    def partials(self, queries: CsrArrays | sp.csr_matrix, matrix: CsrArrays | sp.csr_matrix) -> CsrArrays:
        """``queries @ matrix``: each query's non-zero float32 sums, its columns ascending."""
        columns, sums, indptr = [], [], [0]
        for i in range(queries.shape[0]):
            start, end = queries.indptr[i], queries.indptr[i + 1]
            at, owner = row_entries(matrix, np.asarray(queries.indices[start:end]))
            found, inverse = np.unique(matrix.indices[at], return_inverse=True)
            totals = np.zeros(len(found), np.float32)
            np.add.at(totals, inverse, queries.data[start:end][owner].astype(np.float32) * matrix.data[at])
            kept = totals != 0  # as scipy's product, which stores no zero
            columns.append(found[kept])
            sums.append(totals[kept])
            indptr.append(indptr[-1] + int(kept.sum()))
        data = np.concatenate(sums) if sums else np.zeros(0, np.float32)
        indices = np.concatenate(columns) if columns else np.zeros(0, np.int64)
        return CsrArrays(data, indices, np.asarray(indptr, np.int64), (queries.shape[0], matrix.shape[1]))

    def products(self, matrix: CsrArrays | sp.csr_matrix, rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
        """``matrix[rows] @ vector`` in float32."""
        at, owner = row_entries(matrix, rows)
        totals = np.zeros(len(rows), np.float32)
        np.add.at(totals, owner, matrix.data[at] * vector[matrix.indices[at]])
        return totals


class ScipySums:
    """The sums by scipy's products."""

    sparse = True

    def partials(self, queries: CsrArrays | sp.csr_matrix, matrix: sp.csr_matrix) -> sp.csr_matrix:
        return (as_sparse(queries) @ matrix).tocsr()

    def products(self, matrix: sp.csr_matrix, rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
        return matrix[rows] @ vector


def as_sparse(matrix: CsrArrays | sp.csr_matrix) -> sp.csr_matrix:
    return matrix.sparse() if isinstance(matrix, CsrArrays) else matrix


def sums_for(mentions: int) -> ArraySums | ScipySums:
    """The sums a call of ``mentions`` takes: numpy alone for one of a process's first short calls while scipy is not
    imported (numpy alone is slower per mention: a long run imports scipy early), else scipy's."""
    global _calls_without_scipy
    if mentions <= SHORT_CALL and _calls_without_scipy < FIRST_CALLS and "scipy.sparse" not in sys.modules:
        _calls_without_scipy += 1
        return ArraySums()
    return ScipySums()
