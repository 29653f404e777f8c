"""Issue 39/45: the premise gate, the centroid SFI, and every comparative claim evaluated on its
control (the baseline or a do-nothing method in HyperDepth's place) does not pass."""

import numpy as np
import pytest

from icml26.core import RunContext, Status
from icml26.hyperdepth import (
    HyperDepth,
    HyperGRACE,
    centroid_sfi,
    evaluate_embedding,
    gradient_conflict,
    make_hierarchical_hypergraph,
    raw_features,
    semantic_flattening_index,
)
from icml26.hyperdepth.experiments import common, synthetic
from icml26.hyperdepth.experiments.highschool import SOC_CLAIMS, average_ranks
from icml26.hyperdepth.experiments.orthogonality import ORTH_CLAIMS
from icml26.hyperdepth.experiments.synthetic import SYN_CLAIMS, SYN_PRESETS


def claim(claims, cid):
    return next(c for c in claims if c.id == cid)


def firm(c, value):
    """The claim judged on an exact value (the control's), not on seed noise."""
    return c.judge([value], deterministic=True).status


@pytest.fixture(scope="module")
def data():
    return make_hierarchical_hypergraph(n_per_fine=8, n_edges=60, dim=8, seed=0)


# centroid SFI ---------------------------------------------------------------------------------


def test_centroid_sfi_ignores_within_class_noise_that_the_pairwise_sfi_counts():
    rng = np.random.default_rng(0)
    means = {0: [4.0, 0.5], 1: [4.0, -0.5], 2: [-4.0, 0.5], 3: [-4.0, -0.5]}
    fine = np.repeat(np.arange(4), 50)
    coarse = fine // 2
    z = np.array([means[f] for f in fine]) + 3.0 * rng.standard_normal((200, 2))
    z = np.hstack([z, 3.0 * rng.standard_normal((200, 6))])  # noise dimensions
    assert centroid_sfi(z, fine, coarse) < 0.5 < semantic_flattening_index(z, fine, coarse)


def test_centroid_sfi_rejects_a_fine_class_under_two_coarse_labels():
    with pytest.raises(ValueError, match="one coarse label"):
        centroid_sfi(np.eye(4), [0, 0, 1, 2], [0, 1, 1, 0])
    with pytest.raises(ValueError, match="sibling"):
        centroid_sfi(np.eye(4), [0, 1, 2, 3], [0, 1, 2, 3])


def test_evaluate_embedding_reports_the_centroid_sfi(data):
    out = evaluate_embedding(data.x, data.y, data.y_coarse, n_splits=2)
    assert out["centroid_sfi"] == centroid_sfi(data.x, data.y, data.y_coarse)


# premise gate P0 ------------------------------------------------------------------------------


def test_premise_gap_is_the_reference_minus_its_smoothed_input_and_a_do_nothing_fails_it(data):
    smoothed = raw_features(data.x, data.hypergraph, 2)
    # a "reference" that does nothing to its smoothed input: no flattening, the gate fails
    same = {
        "hypergrace_centroid_sfi": centroid_sfi(smoothed, data.y, data.y_coarse),
        "hypergrace_sfi": semantic_flattening_index(smoothed, data.y, data.y_coarse),
    }
    out = common.premise_metrics(data, same)
    assert out["premise_centroid_sfi_gap"] == pytest.approx(0.0, abs=1e-12)
    assert out["premise_sfi_gap"] == pytest.approx(0.0, abs=1e-12)
    assert firm(claim(SYN_CLAIMS, "P0"), out["premise_centroid_sfi_gap"]) is Status.FAILS
    assert firm(claim(SYN_CLAIMS, "P0s"), out["premise_sfi_gap"]) is Status.FAILS
    assert np.isnan(common.premise_metrics(data, {})["premise_centroid_sfi_gap"])


def test_hierarchy_claims_sit_behind_the_premise_gate_and_accuracy_claims_do_not():
    gates = {c.id: c.gates for c in SYN_CLAIMS if c.kind == "claim"}
    assert gates == {
        "S2": (),
        "G1": (),
        "S3": ("P0", "P0s"),  # judged on the pairwise SFI: its premise in that SFI too
        "G2": ("P0", "P0s"),
        "G3a": ("P0",),
        "G3b": ("P0",),
        "DR": ("P0",),  # issue 45: both readings of the high branch, in centroid SFI
        "DRb": ("P0",),
        "G1b": (),
        "G3ab": ("P0",),
    }
    assert [c.id for c in SYN_CLAIMS if c.kind == "gate"] == ["P0", "P0s"]


# controls -------------------------------------------------------------------------------------


def test_synthetic_claims_fail_with_hypergrace_in_hyperdepths_place(tmp_path, monkeypatch):
    real = common.make_method

    def hypergrace_for_hyperdepth(name, config, tree, tau=None):
        if name in ("hyperdepth", "hd_band"):
            return HyperGRACE(dim=config.dim, proj_dim=config.proj_dim, epochs=config.epochs)
        return real(name, config, tree, tau)

    monkeypatch.setattr(common, "make_method", hypergrace_for_hyperdepth)
    # the same fit and evaluation streams for both: the "method" is the baseline itself
    streams = RunContext.numpy_generator
    monkeypatch.setattr(
        RunContext,
        "numpy_generator",
        lambda self, name: streams(
            self, name.replace("hyperdepth", "hypergrace").replace("hd_band", "hypergrace")
        ),
    )
    ctx = RunContext(seed=0, artifact_dir=tmp_path)
    out = synthetic.synthetic(SYN_PRESETS["smoke"], ctx)
    assert out["sfi_minus_hypergrace"] == pytest.approx(0.0, abs=1e-9)
    for cid, metric in [
        ("S3", "sfi_minus_hypergrace"),
        ("G2", "sfi_minus_best"),
        ("G3a", "nmi_coarse_minus_best"),
        ("G3b", "dp_minus_best"),
        ("DR", "hyperdepth_depth_restored"),
        ("DRb", "hd_band_depth_restored"),
        ("G3ab", "hd_band_nmi_coarse_minus_best"),
    ]:
        assert firm(claim(SYN_CLAIMS, cid), out[metric]) is Status.NOT_REPRODUCED, cid


def test_accuracy_claims_fail_on_an_embedding_without_class_information(data):
    noise = np.random.default_rng(0).standard_normal((data.x.shape[0], 16))
    acc = evaluate_embedding(noise, data.y, n_splits=4, seed=0)["fine_acc"]
    assert firm(claim(SYN_CLAIMS, "S2"), acc) is Status.NOT_REPRODUCED
    best = evaluate_embedding(data.x, data.y, n_splits=4, seed=0)["fine_acc"]
    assert firm(claim(SYN_CLAIMS, "G1"), acc - best) is Status.NOT_REPRODUCED
    assert firm(claim(SYN_CLAIMS, "G1b"), acc - best) is Status.NOT_REPRODUCED


def test_depth_restored_is_one_at_the_smoothed_input_and_zero_at_the_flat_reference():
    out = {"hypergrace_centroid_sfi": 0.6, "premise_centroid_sfi_gap": 0.2}
    out |= {"hd_band_centroid_sfi": 0.4, "hyperdepth_centroid_sfi": 0.6}
    assert common.depth_restored(out, "hd_band") == pytest.approx(1.0)
    assert common.depth_restored(out, "hyperdepth") == pytest.approx(0.0)
    out["hyperdepth_centroid_sfi"] = 0.7  # flatter than the reference: negative, not clipped
    assert common.depth_restored(out, "hyperdepth") == pytest.approx(-0.5)
    assert np.isnan(common.depth_restored({**out, "premise_centroid_sfi_gap": 0.0}, "hd_band"))
    assert np.isnan(common.depth_restored(out, "tricl"))


def test_headline_fails_when_hyperdepth_only_ties_the_best_other_method():
    out = {}
    for d, (raw, hg) in {"high_school": (0.77, 0.88), "workplace": (0.38, 0.55)}.items():
        out |= {f"{d}_raw_fine_acc": raw, f"{d}_hypergrace_fine_acc": hg}
        out[f"{d}_hyperdepth_fine_acc"] = hg  # the baseline in HyperDepth's place
    methods = ("raw", "hypergrace", "hyperdepth")
    ranks = average_ranks(out, ("high_school", "workplace"), methods)
    assert ranks["hyperdepth_rank_margin"] == 0.0
    headline = claim(SOC_CLAIMS, "H")
    assert headline.headline and firm(headline, ranks["hyperdepth_rank_margin"]) is (
        Status.NOT_REPRODUCED
    )
    out["workplace_hyperdepth_fine_acc"] = 0.60  # best on one set, tied on the other
    assert average_ranks(out, ("high_school", "workplace"), methods)["hyperdepth_rank_margin"] > 0


def test_interference_claim_fails_on_the_decoupled_exact_model(data):
    common_kw = {"dim": 8, "proj_dim": 8, "d_h": 4, "tree": (4, 2)}
    exact = HyperDepth(**common_kw, mode="exact", shared_transform=True)
    cos = abs(gradient_conflict(exact, data, 0))
    assert firm(claim(ORTH_CLAIMS, "O3"), cos) is Status.NOT_REPRODUCED
    assert {c.id for c in ORTH_CLAIMS if c.kind == "sanity"} == {"O1", "O2"}
