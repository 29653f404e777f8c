"""The seed-aware figure helpers draw the seeds' mean and spread, with legends off the data."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from icml26.core.plotting import bars_with_seeds, legend_outside, mean_band, seeds_note, stack
from icml26.core.validation import check_positive_int


def test_stack_orders_seeds_and_names_missing_ones():
    metrics = [{"a": [1.0, 2.0]}, {"a": [3.0, 5.0]}, {"b": 1.0}]
    assert stack(metrics[:2], "a").tolist() == [[1.0, 2.0], [3.0, 5.0]]
    with pytest.raises(KeyError, match=r"missing from seed record\(s\) \[2\]"):
        stack(metrics, "a")
    with pytest.raises(ValueError, match="at least one seed"):
        stack([], "a")


def test_mean_band_draws_mean_and_min_max_skipping_nan():
    values = np.array([[1.0, 4.0, np.nan], [3.0, 0.0, 2.0], [2.0, 2.0, np.nan]])
    fig, ax = plt.subplots()
    line = mean_band(ax, [0, 1, 2], values, label="x")
    assert line.get_ydata().tolist() == [2.0, 2.0, 2.0]
    (band,) = ax.collections
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() == 0.0 and ys.max() == 4.0
    with pytest.raises(ValueError, match="3 points per seed but x has 2"):
        mean_band(ax, [0, 1], values)
    plt.close(fig)


def test_single_seed_has_no_band_and_bars_show_every_seed():
    fig, ax = plt.subplots()
    mean_band(ax, [0, 1], np.array([[1.0, 2.0]]))
    assert not ax.collections
    bars = bars_with_seeds(ax, ["a", "b"], np.array([[1.0, 3.0], [3.0, 5.0]]))
    assert [b.get_height() for b in bars] == [2.0, 4.0]
    dots = [line for line in ax.get_lines() if line.get_marker() == "."]
    assert len(dots) == 2
    plt.close(fig)
    assert seeds_note(3) == "mean, band: min–max of 3 seeds" and seeds_note(1) == "1 seed"


def test_legend_outside_does_not_cover_the_axes():
    fig, ax = plt.subplots()
    assert legend_outside(ax) is None
    ax.plot([0, 1], [0, 1], label="a")
    legend = legend_outside(ax)
    fig.tight_layout()
    renderer = fig.canvas.get_renderer()
    assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
    plt.close(fig)


def test_check_positive_int_maximum():
    assert check_positive_int("n", 5, maximum=5) == 5
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, 5\]; got 6"):
        check_positive_int("n", 6, maximum=5)
