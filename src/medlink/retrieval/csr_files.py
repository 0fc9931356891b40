"""A CSR matrix as plain ``.npy`` files (data, indices, indptr, shape), read back without a zip archive.

Why: ``scipy.sparse.load_npz`` reads a zip member by member and checks each member's CRC as it copies, which made
loading an index's TF-IDF matrices most of its start-up. Plain ``.npy`` files are memory-mapped, not read: pages come
from the page cache as queries touch them (a warm ``medlink link`` of one mention reads a few), and worker processes
share them. Each file's structure is still checked here (every column index in range, row pointers in order), so
damage that would send scipy outside the arrays is refused at load; the column indices are not read whole where this
process found their file's checksum right (``file_stamps.was_checked``). A file larger than the load-time checksum's
limit (``inventory.SMALL_FILE``) is checked whole by ``medlink index verify``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from medlink.errors import DamagedFileError, reading
from medlink.file_stamps import was_checked

if TYPE_CHECKING:
    import scipy.sparse as sp

PARTS = ("data", "indices", "indptr", "shape")


@dataclass(frozen=True)
class CsrArrays:
    """A CSR matrix's arrays (sorted column indices, no duplicates), without scipy: what a short search reads, so that a
    warm ``medlink link`` never imports scipy.sparse (a sixth of its start); ``sparse()`` gives scipy's matrix."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple[int, int]

    @property
    def nnz(self) -> int:
        return len(self.data)

    def sparse(self) -> sp.csr_matrix:
        import scipy.sparse as sp

        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=self.shape, copy=False)


def part_path(directory: Path, stem: str, part: str) -> Path:
    return Path(directory) / f"{stem}.{part}.npy"


def save_csr(directory: Path, stem: str, matrix: sp.csr_matrix | CsrArrays) -> None:
    """``matrix`` as ``<stem>.data.npy``, ``.indices.npy``, ``.indptr.npy`` and ``.shape.npy`` in ``directory``."""
    arrays = {"data": matrix.data, "indices": matrix.indices, "indptr": matrix.indptr, "shape": np.asarray(matrix.shape, np.int64)}
    for part, array in arrays.items():
        np.save(part_path(directory, stem, part), np.ascontiguousarray(array), allow_pickle=False)


def has_csr(directory: Path, stem: str) -> bool:
    return part_path(directory, stem, "indptr").is_file()


def _array(path: Path) -> np.ndarray:
    """The array in ``path``, memory-mapped (read-only)."""
    with reading(path):
        return np.load(path, mmap_mode="r", allow_pickle=False)


def load_csr(directory: Path, stem: str) -> sp.csr_matrix:
    """The matrix ``save_csr`` wrote, or the zip an older index has (``<stem>.npz``); refused, naming the file, when its
    parts do not fit together."""
    matrix = load_arrays(directory, stem)
    return matrix.sparse() if isinstance(matrix, CsrArrays) else matrix


def load_arrays(directory: Path, stem: str) -> CsrArrays | sp.csr_matrix:
    """``load_csr``'s matrix as its arrays, without importing scipy (an older index's zip: scipy's matrix)."""
    if not has_csr(directory, stem):
        import scipy.sparse as sp

        path = Path(directory) / f"{stem}.npz"
        with reading(path):
            return sp.load_npz(path).tocsr()
    data, indices, indptr, shape = (_array(part_path(directory, stem, part)) for part in PARTS)
    if shape.shape != (2,) or (shape < 0).any():
        raise DamagedFileError(part_path(directory, stem, "shape"), ValueError(f"not a matrix shape: {shape.tolist()}"))
    rows, columns = (int(n) for n in shape)
    if indptr.shape != (rows + 1,) or indptr[0] != 0 or (np.diff(indptr) < 0).any():
        raise DamagedFileError(part_path(directory, stem, "indptr"), ValueError(f"not the row pointers of {rows:,} rows"))
    if data.shape != (int(indptr[-1]),):
        raise DamagedFileError(part_path(directory, stem, "data"), ValueError(f"{len(data):,} values for {int(indptr[-1]):,} entries"))
    whole = not was_checked(part_path(directory, stem, "indices"))  # a file whose checksum was found right is as written
    if indices.shape != data.shape or (whole and len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= columns)):
        raise DamagedFileError(part_path(directory, stem, "indices"), ValueError(f"column indices outside 0-{columns - 1}"))
    return CsrArrays(data, indices, indptr, (rows, columns))
