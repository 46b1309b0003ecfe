"""Shared fixtures: the tiers this CPU runs and a seeded generator."""

import os

import numpy as np
import pytest

import tessera

TIERS = tessera.tiers()["available"]
SKIPPED = [t for t in tessera.tiers()["all"] if t not in TIERS]


def pytest_report_header(config):
    """Say in the run's header which tiers the comparisons cover and which
    this CPU cannot run (those are skipped, not checked)."""
    line = f"tessera tiers compared: {', '.join(TIERS)}"
    if SKIPPED:
        line += f"; skipped (this CPU cannot run them): {', '.join(SKIPPED)}"
    return line


@pytest.fixture
def rng():
    return np.random.default_rng(int(os.environ.get("TESSERA_TEST_SEED", "20261205")))


def bits(a: np.ndarray) -> np.ndarray:
    """The raw bytes of ``a`` (C order), for bit-for-bit comparisons."""
    return np.ascontiguousarray(a).view(np.uint8)


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(bits(a), bits(b))


def every_execution(call):
    """``call(threads=, tier=)`` on every tier this CPU runs at 1, 2 and 7
    threads: the results, all of which must have the same bits."""
    return [call(threads=n, tier=t) for t in TIERS for n in (1, 2, 7)]
