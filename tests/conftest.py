"""Test-session rules: headless plotting, derandomised hypothesis, and no test may skip for a
missing package.

The `dev` extra installs every optional dependency and reference the tests use, so a skip means
a check that silently never runs. The one allowed skip is a test marked ``gpu`` on a machine
without CUDA; any other skip fails the session.
"""

import os

import pytest
from hypothesis import settings

# Headless plotting in every test process.
os.environ.setdefault("MPLBACKEND", "Agg")

# Under pytest-xdist each worker gets its share of the cores: torch, OpenMP and BLAS pools sized
# for the whole machine oversubscribe it, and tiny ops then spin (spinefl's five-round test:
# 32 CPU-s with two threads per worker on 2 cores, 8.8 with one; 2026-12-08). Set before any
# test module loads torch, numpy or scikit-learn.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
_THREADS_PER_WORKER = max(1, len(os.sched_getaffinity(0)) // _WORKERS)
if _WORKERS > 1:
    for _pool in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_pool, str(_THREADS_PER_WORKER))

# Property tests draw the same examples on every run, so a suite that passed passes again; new
# draws are a campaign's job (see tests/test_fuzz_public_api.py), not CI's.
settings.register_profile("icml26", derandomize=True, database=None)
settings.load_profile("icml26")

_FORBIDDEN_SKIPS: list[str] = []


def pytest_collection_modifyitems(config, items):
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (marked gpu)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_runtest_logreport(report):
    if report.skipped and "gpu" not in report.keywords:
        _FORBIDDEN_SKIPS.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if _FORBIDDEN_SKIPS and exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter):
    if _FORBIDDEN_SKIPS:
        terminalreporter.write_line(
            "FAILED: tests skipped (install the dev extra; only `gpu` tests may skip): "
            + ", ".join(_FORBIDDEN_SKIPS),
            red=True,
        )
