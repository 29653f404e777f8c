import json
import os

import numpy as np
import pytest
import torch

from icml26.core.results import (
    TaskRecord,
    atomic_write_text,
    config_hash,
    load_records,
    to_jsonable,
)


def record(**changes):
    spec = dict(
        experiment="toy.coin",
        preset="smoke",
        config={"p": 0.3},
        config_hash=config_hash({"p": 0.3}),
        seed_index=0,
        seed=11,
        status="ok",
        metrics={"p_hat": 0.31},
        wall_time_s=0.5,
        cpu_time_s=0.25,
    )
    spec.update(changes)
    return TaskRecord(**spec)


def test_record_save_load_roundtrip(tmp_path):
    r = record(metrics={"p_hat": 0.31, "curve": [1.0, float("inf")]}, versions={"numpy": "2"})
    path = r.save(tmp_path)
    assert path == tmp_path / "toy.coin" / f"{r.config_hash}-seed0.json"
    assert TaskRecord.load(path) == r
    assert list(load_records(tmp_path)) == [r]


def test_to_jsonable_converts_numpy_and_torch():
    out = to_jsonable(
        {"a": np.float32(0.5), "b": np.arange(3), "c": torch.tensor([1.5]), "d": (1,)}
    )
    assert out == {"a": 0.5, "b": [0, 1, 2], "c": [1.5], "d": [1]}
    json.dumps(out)
    with pytest.raises(TypeError, match="cannot store a value of type object"):
        to_jsonable(object())


def test_atomic_write_keeps_the_old_file_when_the_rename_fails(tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    atomic_write_text(target, "old")

    def broken_replace(src, dst):
        raise KeyboardInterrupt  # interrupted between writing the temp file and the rename

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]  # no temp file left behind
