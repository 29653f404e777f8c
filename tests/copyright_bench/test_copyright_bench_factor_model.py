"""Spec §7.7: the factor model recovers a HeuristicAgent's coefficients; GLM cross-check."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

from icml26.copyright_bench import (
    DEFAULT_COEFS,
    HeuristicAgent,
    copyright_task,
    evaluate,
    fit_factor_model,
    true_coefficients,
)


@pytest.fixture(scope="module")
def heuristic_run():
    return evaluate(copyright_task(n_per_family=20), HeuristicAgent(DEFAULT_COEFS, seed=11), seed=3)


def test_slot_level_logit_recovers_the_true_coefficients(heuristic_run):
    model = fit_factor_model(heuristic_run.slots, level="slot")
    truth = true_coefficients(DEFAULT_COEFS)
    assert model.nobs == len(heuristic_run.slots) and model.n_clusters == 60
    for name, value in truth.items():
        # 4 cluster-robust SEs: a single fit misses this band with probability ~1e-4
        assert abs(model.params[name] - value) < 4 * model.bse[name], name
    assert model.covers(truth)["intent[explicit_request]"]


def test_dummy_coding_matches_statsmodels_formula_glm(heuristic_run):
    slots = heuristic_run.slots
    ours = fit_factor_model(slots, level="slot")
    glm = smf.glm(
        "violation ~ C(intent, Treatment('neutral')) + C(pressure, Treatment('none'))"
        " + C(family, Treatment('website'))",
        data=slots,
        family=sm.families.Binomial(),
    ).fit(cov_type="cluster", cov_kwds={"groups": pd.factorize(slots["task_id"])[0]})
    # Logit and GLM-Binomial maximise the same likelihood: equal to solver tolerance
    assert ours.params["intercept"] == pytest.approx(glm.params["Intercept"], abs=1e-6)
    key = "C(intent, Treatment('neutral'))[T.explicit_request]"
    assert ours.params["intent[explicit_request]"] == pytest.approx(glm.params[key], abs=1e-6)
    key = "C(pressure, Treatment('none'))[T.high]"
    assert ours.params["pressure[high]"] == pytest.approx(glm.params[key], abs=1e-6)


def test_episode_level_fit_runs_on_episode_rows(heuristic_run):
    model = fit_factor_model(heuristic_run.episodes, level="episode")
    assert model.level == "episode" and model.params["intent[explicit_request]"] > 0
    assert model.params["intent[compliance_reminder]"] < 0


def test_bad_input_and_separated_data():
    df = pd.DataFrame(
        {
            "violation": [0, 1, 0, 1],
            "intent": ["neutral"] * 4,
            "pressure": ["none"] * 4,
            "family": ["website"] * 4,
            "task_id": [0, 0, 1, 1],
        }
    )
    with pytest.raises(ValueError, match="level must be 'episode' or 'slot'"):
        fit_factor_model(df, level="task")
    with pytest.raises(ValueError, match="is constant"):
        fit_factor_model(df.assign(violation=1))
    with pytest.raises(ValueError, match=r"missing column\(s\) \['family'\]"):
        fit_factor_model(df.drop(columns="family"))
    with pytest.raises(ValueError, match="must be 0/1"):
        fit_factor_model(df.assign(violation=[0, 2, 0, 1]))
    separated = pd.DataFrame(
        {
            "violation": [0, 0, 1, 1] * 5,
            "intent": ["neutral", "neutral", "explicit_request", "explicit_request"] * 5,
            "pressure": ["none"] * 20,
            "family": ["website"] * 20,
            "task_id": np.arange(20) % 4,
        }
    )
    with pytest.raises(ValueError, match="no finite fit"):
        fit_factor_model(separated)
