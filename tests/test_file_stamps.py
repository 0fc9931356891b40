"""A checksum remembered against a file's stat is recalled while the file stays unwritten, and never after a write."""

from __future__ import annotations

import json
import os

from medlink import file_stamps
from medlink.file_stamps import FileStamps


def test_a_stamp_is_recalled_until_the_file_is_written_even_with_its_size_and_time_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(file_stamps, "RACY_SECONDS", 0)
    data = tmp_path / "data.bin"
    data.write_bytes(b"abc")
    stamps = FileStamps(tmp_path / "stamps.json")
    stamps.remember(data, "crc32", "352441c2")
    stamps.save()
    again = FileStamps(tmp_path / "stamps.json")  # as the next process reads them
    assert again.recalled(data, "crc32") == "352441c2" and again.recalled(data, "sha256") is None
    before = data.stat()
    data.write_bytes(b"abd")
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert data.stat().st_mtime_ns == before.st_mtime_ns and again.recalled(data, "crc32") is None


def test_a_file_written_just_now_is_not_stamped(tmp_path):
    data = tmp_path / "data.bin"
    data.write_bytes(b"abc")
    stamps = FileStamps(tmp_path / "stamps.json")
    stamps.remember(data, "crc32", "352441c2")
    assert stamps.recalled(data, "crc32") is None and not stamps.changed


def test_a_damaged_stamp_file_means_reading_the_files_again(tmp_path, monkeypatch):
    monkeypatch.setattr(file_stamps, "RACY_SECONDS", 0)
    data, place = tmp_path / "data.bin", tmp_path / "stamps.json"
    data.write_bytes(b"abc")
    place.write_text(json.dumps({f"crc32:{data.resolve()}": 5}), encoding="utf-8")
    assert FileStamps(place).recalled(data, "crc32") is None
    place.write_text("{not json", encoding="utf-8")
    stamps = FileStamps(place)
    assert stamps.stamps == {}
    stamps.remember(data, "crc32", "352441c2")
    stamps.save()
    assert FileStamps(place).recalled(data, "crc32") == "352441c2"
