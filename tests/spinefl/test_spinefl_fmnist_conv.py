"""spinefl.fmnist_conv quick on the shipped seed-0 models, and every claim on its control."""

import numpy as np
import pytest

from icml26.core import RunContext, Status


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    from icml26.spinefl.experiments.fmnist_conv import PRESETS, fmnist_conv

    ctx = RunContext(seed=0, artifact_dir=tmp_path_factory.mktemp("fmnist_conv"))
    return fmnist_conv(PRESETS["quick"], ctx)


@pytest.fixture(scope="module")
def correct():
    from icml26.spinefl.conv_testbed import item_correct, make_conv_task
    from icml26.spinefl.standins import CONV_METHODS, STANDIN_RECIPE, load_conv_standin

    task = make_conv_task(0.1, 0, STANDIN_RECIPE)
    return {m: item_correct(load_conv_standin(m)[0], *task.test) for m in CONV_METHODS}


def test_quick_reads_the_shipped_models_and_measures_the_mechanism_live(quick, correct):
    assert quick["reload_error"] == 0.0  # the records' test accuracy is reproduced exactly
    assert len(quick["spine_minus_best_alpha01"]) == 2000  # paired per test item
    best = quick["best_baseline_alpha01"]
    diff = np.asarray(quick["spine_minus_best_alpha01"])
    np.testing.assert_array_equal(diff, correct["SpineFL"] - correct[best])
    assert len(quick["selection_kl"]) >= 3 and all(k > 0 for k in quick["selection_kl"])
    assert np.isfinite(quick["mechanism"]["overlap_shared"])


def test_every_conv_claim_fails_when_spinefl_is_replaced_by_its_control(correct):
    from icml26.spinefl.experiments.fmnist_conv import (
        ABLATIONS,
        CLAIMS,
        CONV_BASELINES,
        paired_comparisons,
    )

    for claim in CLAIMS:
        if claim.kind != "claim":
            continue
        if claim.metric == "spine_minus_best_alpha05":
            values = [claim.control_value] * 2000  # a method exactly 1 pt behind the best
        else:
            control = next(
                (m for k, m in ABLATIONS.items() if claim.metric == f"spine_minus_{k}"), None
            )
            swapped = dict(correct)
            if control is None:  # the best baseline in SpineFL's place
                best = max(CONV_BASELINES, key=lambda m: correct[m].mean())
                swapped["SpineFL"] = correct[best]
            else:
                swapped["SpineFL"] = correct[control]
            values = paired_comparisons(swapped, "_alpha01")[claim.metric]
        assert claim.judge([values]).status is not Status.REPRODUCED, claim.id
