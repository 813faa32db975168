"""Files are replaced whole: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import stat

import pytest

from sciarena.core.files import atomic_output


def test_the_target_is_replaced_only_when_the_block_ends(tmp_path):
    target = tmp_path / "bench.jsonl"
    target.write_text("old\n")
    with atomic_output(target) as handle:
        handle.write("new\n")
        assert target.read_text() == "old\n", "the target must not change while the new file is written"
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644  # readable by others, unlike mkstemp's default
    assert [p.name for p in tmp_path.iterdir()] == ["bench.jsonl"]


def test_an_error_leaves_the_old_file_and_no_temporary_behind(tmp_path):
    target = tmp_path / "copy.npz"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_output(target, "wb") as handle:
        handle.write(b"half")
        raise RuntimeError("disk full")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["copy.npz"]
