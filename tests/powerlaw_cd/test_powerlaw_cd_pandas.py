"""pandas / tigramite / statsmodels / networkx interfaces: DataFrames in (T rows × N named
columns, their layout), labelled adjacency DataFrames and networkx DiGraphs out."""

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from statsmodels.tsa.api import VAR

from icml26.powerlaw_cd import (
    CDResult,
    Dataset,
    f1_tnr,
    granger_pairwise,
    pcmci_plus,
    placy,
    powerlaw_features,
    powerlaw_features_reference,
    simulate_ou,
    var_lingam,
)

NAMES = ["rain", "upstream", "downstream"]


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    sim = simulate_ou(3, 1200, stock_like=True, stationary=False, sigma_b=1.0, seed=3)
    index = pd.date_range("2020-01-01", periods=sim.X.shape[1], freq="h")
    return pd.DataFrame(sim.X.T, index=index, columns=NAMES)  # (T, N), pandas' layout


def assert_same_graph(res_df: CDResult, res_arr: CDResult, names) -> None:
    np.testing.assert_array_equal(res_df.adjacency, res_arr.adjacency)
    np.testing.assert_array_equal(res_df.pvalues, res_arr.pvalues)  # same arithmetic: exact
    assert res_df.names == tuple(names) and res_arr.names is None
    A = res_df.adjacency_frame()
    assert list(A.index) == list(A.columns) == list(names)
    np.testing.assert_array_equal(A.to_numpy(), res_arr.adjacency)
    np.testing.assert_array_equal(res_df.pvalue_frame().to_numpy(), res_arr.pvalues)
    G = res_df.to_networkx()
    assert isinstance(G, nx.DiGraph) and list(G.nodes) == list(names)
    expected = {(names[j], names[i]) for j, i in zip(*np.nonzero(res_arr.adjacency), strict=True)}
    assert set(G.edges) == expected
    for cause, effect, data in G.edges(data=True):
        assert A.loc[cause, effect] == 1
        assert data["pvalue"] == res_df.pvalue_frame().loc[cause, effect]
    # the DiGraph's adjacency read back by networkx itself is the labelled adjacency
    back = nx.to_pandas_adjacency(G, nodelist=names, dtype=int)
    np.testing.assert_array_equal(back.to_numpy(), A.to_numpy())


def test_placy_on_a_dataframe_equals_placy_on_its_transposed_array(frame):
    res_df = placy(frame, max_lags=5)
    res_arr = placy(frame.to_numpy().T, max_lags=5)
    assert_same_graph(res_df, res_arr, NAMES)
    assert res_df.adjacency.sum() > 0  # the comparison covers some edges
    for f_df, f_arr in zip(res_df.features, res_arr.features, strict=True):
        np.testing.assert_array_equal(f_df, f_arr)


@pytest.mark.parametrize(("fdr", "acyclic"), [("bh", False), ("none", True)])
def test_decision_options_on_dataframes(frame, fdr, acyclic):
    kwargs = {"max_lags": 5, "fdr": fdr, "acyclic": acyclic}
    assert_same_graph(placy(frame, **kwargs), placy(frame.to_numpy().T, **kwargs), NAMES)


def test_granger_pairwise_on_a_dataframe_and_statsmodels_own_var_on_the_same_frame(frame):
    res_df = granger_pairwise(frame, max_lags=3)
    assert_same_graph(res_df, granger_pairwise(frame.to_numpy().T, max_lags=3), NAMES)
    P = res_df.pvalue_frame()
    for cause in NAMES:
        for effect in NAMES:
            if cause == effect:
                continue
            # statsmodels on the (T, N) frame, by column names: the same bivariate Wald test
            fit = VAR(frame[[effect, cause]]).fit(maxlags=3, trend="c")
            reference = fit.test_causality(effect, [cause], kind="wald").pvalue
            # our OLS solves the centred normal equations, statsmodels lstsq: rounding only
            assert P.loc[cause, effect] == pytest.approx(reference, rel=1e-7, abs=1e-12)


def test_integer_column_labels_are_kept(frame):
    df = frame.set_axis([10, 20, 30], axis=1)
    res = placy(df, max_lags=5)
    assert res.names == (10, 20, 30) and list(res.to_networkx().nodes) == [10, 20, 30]


@pytest.mark.parametrize("fn", [powerlaw_features, powerlaw_features_reference])
@pytest.mark.parametrize("stride", [1, 7])
def test_features_of_a_dataframe_are_dataframes_indexed_by_window_end(frame, fn, stride):
    window = 50
    data = frame.iloc[:400]
    lam_df, amp_df = fn(data, window=window, stride=stride)
    lam, amp = fn(data.to_numpy().T, window=window, stride=stride)
    assert isinstance(lam_df, pd.DataFrame) and list(lam_df.columns) == NAMES
    np.testing.assert_array_equal(lam_df.to_numpy().T, lam)
    np.testing.assert_array_equal(amp_df.to_numpy().T, amp)
    # row k covers samples k*stride .. k*stride + W - 1 and is labelled by the last one
    expected = [data.index[k * stride + window - 1] for k in range(lam.shape[1])]
    assert list(lam_df.index) == expected == list(amp_df.index)


def test_pcmci_plus_on_a_dataframe_equals_tigramite_own_entry_point(frame):
    from tigramite.data_processing import DataFrame
    from tigramite.independence_tests.parcorr import ParCorr
    from tigramite.pcmci import PCMCI

    data = frame.iloc[:400]
    res_df = pcmci_plus(data, tau_max=2)
    assert_same_graph(res_df, pcmci_plus(data.to_numpy().T, tau_max=2), NAMES)
    tg = DataFrame(data.to_numpy(), var_names=NAMES)  # tigramite's (T, N) layout
    out = PCMCI(dataframe=tg, cond_ind_test=ParCorr(), verbosity=0).run_pcmciplus(
        tau_min=1, tau_max=2, pc_alpha=0.05
    )
    lagged = np.any(out["graph"][:, :, 1:] == "-->", axis=2)
    np.fill_diagonal(lagged, False)
    np.testing.assert_array_equal(res_df.adjacency, lagged.astype(int))
    # tigramite's own DataFrame is an accepted input too, with its var_names
    res_tg = pcmci_plus(tg, tau_max=2)
    assert res_tg.names == tuple(NAMES)
    np.testing.assert_array_equal(res_tg.adjacency, res_df.adjacency)
    np.testing.assert_array_equal(res_tg.pvalues, res_df.pvalues)


def test_placy_accepts_a_tigramite_dataframe(frame):
    from tigramite.data_processing import DataFrame

    res = placy(DataFrame(frame.to_numpy(), var_names=NAMES), max_lags=5)
    assert_same_graph(res, placy(frame.to_numpy().T, max_lags=5), NAMES)


def test_var_lingam_keeps_the_names(frame):
    pytest.importorskip("lingam")
    data = frame.iloc[:400]
    kwargs = {"lags": 1, "n_subsets": 2, "subset_length": 200, "seed": 0}
    res_df, res_arr = var_lingam(data, **kwargs), var_lingam(data.to_numpy().T, **kwargs)
    np.testing.assert_array_equal(res_df.adjacency, res_arr.adjacency)
    assert res_df.names == tuple(NAMES)
    edges = set(res_df.to_networkx().edges)
    assert edges == {
        (NAMES[j], NAMES[i]) for j, i in zip(*np.nonzero(res_arr.adjacency), strict=True)
    }


def test_dataset_from_a_frame_with_a_labelled_truth_and_aligned_scores(frame):
    truth = pd.DataFrame(0, index=NAMES[::-1], columns=NAMES[::-1])  # another order
    truth.loc["rain", "downstream"] = truth.loc["upstream", "downstream"] = 1
    data = Dataset(frame, truth)
    assert data.names == tuple(NAMES)
    assert data.adjacency.tolist() == [[0, 0, 1], [0, 0, 1], [0, 0, 0]]
    pd.testing.assert_frame_equal(data.to_frame(), frame.reset_index(drop=True))
    est = placy(frame, max_lags=5)
    shuffled = est.adjacency_frame().loc[NAMES[::-1], ["upstream", "rain", "downstream"]]
    assert f1_tnr(data.adjacency_frame(), shuffled) == f1_tnr(data.adjacency, est.adjacency)


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda f: placy(f.assign(rain="x")), TypeError, "X must hold numbers"),
        (lambda f: placy(f.set_axis(["a", "a", "b"], axis=1)), ValueError, "distinct"),
        (lambda f: placy(f.mask(f > f.median()), max_lags=5), ValueError, "X must be finite"),
        (lambda f: placy(f[["rain"]]), ValueError, r"N >= 2 variables \(columns\)"),
        (lambda f: powerlaw_features(f.iloc[:0]), ValueError, "T must be >= window"),
        (lambda f: Dataset(f, np.zeros((3, 3)), ("a", "b")), ValueError, "names"),
        (lambda f: Dataset(f, pd.DataFrame(np.zeros((3, 3)))), ValueError, "labelled adjacency"),
        (
            lambda f: f1_tnr(pd.DataFrame([[0]]), pd.DataFrame([[0]], index=["z"])),
            ValueError,
            "adj_est",
        ),
    ],
)
def test_bad_frames_are_refused_naming_the_parameter(frame, make, error, match):
    with pytest.raises(error, match=match):
        make(frame)


def test_tigramite_dataframe_with_a_mask_is_refused(frame):
    from tigramite.data_processing import DataFrame

    masked = DataFrame(frame.to_numpy(), mask=np.zeros(frame.shape, dtype=bool))
    with pytest.raises(ValueError, match="tigramite DataFrame X must hold one dataset"):
        placy(masked)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"adjacency": [[0, 1]], "pvalues": [[0.1, 0.2]]}, ValueError, "square"),
        ({"adjacency": np.eye(2), "pvalues": np.ones(3)}, ValueError, "pvalues"),
        (
            {"adjacency": np.eye(2), "pvalues": np.ones((2, 2)), "names": ("a",)},
            ValueError,
            "names",
        ),
        (
            {"adjacency": np.eye(2), "pvalues": np.ones((2, 2)), "names": ([1], 2)},
            TypeError,
            "names",
        ),
        ({"adjacency": np.eye(2), "pvalues": np.ones((2, 2)), "meta": 3}, TypeError, "meta"),
        (
            {
                "adjacency": np.eye(2),
                "pvalues": np.ones((2, 2)),
                "features": (np.ones((3, 4)),) * 2,
            },
            ValueError,
            "features",
        ),
    ],
)
def test_cdresult_validates_its_fields(kwargs, error, match):
    with pytest.raises(error, match=match):
        CDResult(**kwargs)
