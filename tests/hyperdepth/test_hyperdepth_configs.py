"""Experiment configs check their fields when built, so a bad --set exits 2 before any task."""

from dataclasses import replace

import pytest
from cli_checks import assert_cli_refuses

from icml26.hyperdepth.experiments import (
    common,
    depth,
    digits,
    highschool,
    orthogonality,
    synthetic,
)

DEFAULTS = {
    "depth": depth.DEPTH_DEFAULT,
    "digits": digits.DIG_DEFAULT,
    "highschool": highschool.SOC_DEFAULT,
    "orthogonality": orthogonality.ORTH_DEFAULT,
    "synthetic": synthetic.SYN_DEFAULT,
}
PRESETS = {
    "depth": depth.DEPTH_PRESETS,
    "digits": digits.DIG_PRESETS,
    "highschool": highschool.SOC_PRESETS,
    "orthogonality": orthogonality.ORTH_PRESETS,
    "synthetic": synthetic.SYN_PRESETS,
}

BAD = [
    ("depth", "datasets", ("walmart",), ValueError),  # no label tree
    ("depth", "methods", ("hypergrace", "hyperdepth"), ValueError),  # P0 reads the tuned one
    ("depth", "n_per_leaf", 7, ValueError),  # below the generator's max_size 8
    ("depth", "n_per_class", 1201, ValueError),  # the shipped subset has 1,200 a class
    ("digits", "k", 1797, ValueError),  # knn_hypergraph needs k < n = 1,797
    ("digits", "k", 0, ValueError),
    ("digits", "epochs", 0, ValueError),
    ("digits", "dim", 2**14 + 1, ValueError),  # above the encoder's MAX_DIM
    ("digits", "tree", (10, 40), ValueError),  # leaves first: must decrease
    ("digits", "tree", (), ValueError),
    ("digits", "methods", ("raw", "hyperdepth"), ValueError),  # D1 reads HyperGRACE's accuracy
    ("digits", "methods", ("hypergrace", "hyperdepth", "grace"), ValueError),  # not buildable
    ("digits", "methods", ("hypergrace", "hyperdepth", "hyperdepth"), ValueError),
    ("digits", "probe_splits", 10**4 + 1, ValueError),  # evaluate_embedding's maximum
    ("digits", "k", 10.0, TypeError),
    ("highschool", "datasets", ("walmart",), ValueError),  # no labels to probe
    ("highschool", "datasets", (), ValueError),
    ("highschool", "feature_dim", 4097, ValueError),  # load_hypergraphx's MAX_FEATURES
    ("highschool", "d_h", 0, ValueError),
    ("highschool", "methods", ("hypergrace", "tricl"), ValueError),  # no HyperDepth to rank
    ("highschool", "datasets", ["high_school"], TypeError),  # a list, not the annotated tuple
    ("orthogonality", "n_per_fine", 7, ValueError),  # below the generator's max_size 8
    ("orthogonality", "n_per_fine", 1001, ValueError),  # exact mode: n <= EXACT_MAX_NODES
    ("orthogonality", "tree", (16, 5), ValueError),  # 16 is not divisible by 5
    ("orthogonality", "tree", (4, 0), ValueError),
    ("orthogonality", "replicates", 0, ValueError),
    ("orthogonality", "trained_epochs", 0, ValueError),
    ("orthogonality", "n_edges", -1, ValueError),
    ("synthetic", "n_per_fine", 4, ValueError),
    ("synthetic", "tree", (16, 16), ValueError),  # strictly decreasing
    ("synthetic", "methods", ("hypergrace", "hd_band"), ValueError),  # S3 reads HyperDepth's SFI
    ("synthetic", "methods", (), ValueError),
    ("synthetic", "feature_dim", 0, ValueError),
    ("synthetic", "epochs", True, TypeError),
]

# one clearly bad --set per experiment, through the CLI
CLI_BAD = {
    "depth": "datasets=[cora]",
    "digits": "tree=[10,40]",
    "highschool": "datasets=[walmart]",
    "orthogonality": "n_per_fine=2",
    "synthetic": "methods=[raw,hypergrace]",
}


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_is_a_valid_config(name):
    for config in PRESETS[name].values():
        assert replace(config) == config


@pytest.mark.parametrize(
    ("name", "field", "value", "error"), BAD, ids=[f"{n}.{f}={v!r}" for n, f, v, _ in BAD]
)
def test_bad_fields_are_refused_by_name(name, field, value, error):
    with pytest.raises(error, match=field):
        replace(DEFAULTS[name], **{field: value})


def test_a_tree_too_large_for_its_width_is_refused():
    wide = replace(synthetic.SYN_DEFAULT, tree=(2**13,))  # 2**19 prototype numbers at d_h = 64
    with pytest.raises(ValueError, match="d_h"):  # PrototypeTree's bound: 2**27 > 2**26
        replace(wide, d_h=2**14)


def test_the_mirrored_bounds_are_the_library_s():
    from icml26.hyperdepth import encoder, prototypes

    assert common.MAX_DIM == encoder.MAX_DIM
    assert common.MAX_PROTOTYPES == prototypes.MAX_PROTOTYPES
    for name in common.METHODS:  # every allowed name builds (raw and p2x: no trainer)
        common.make_method(name, synthetic.SYN_PRESETS["smoke"], (16, 4))


@pytest.mark.parametrize("tree", [(16, 4), (40, 10), (8,), (24, 12, 3), (16, 5), (4, 16), (8, 8)])
def test_the_tree_check_agrees_with_check_tree_sizes(tree):
    from icml26.hyperdepth.prototypes import check_tree_sizes

    try:
        check_tree_sizes(tree, "test")
        library_ok = True
    except ValueError:
        library_ok = False
    try:
        replace(synthetic.SYN_DEFAULT, tree=tree)
        config_ok = True
    except ValueError:
        config_ok = False
    assert config_ok == library_ok


def test_the_smallest_accepted_synthetic_data_builds():
    from icml26.hyperdepth import make_hierarchical_hypergraph

    make_hierarchical_hypergraph(n_per_fine=common.MIN_PER_FINE, n_edges=1, dim=1)
    with pytest.raises(ValueError, match="n_per_fine"):
        make_hierarchical_hypergraph(n_per_fine=common.MIN_PER_FINE - 1, n_edges=1, dim=1)


@pytest.mark.parametrize("name", CLI_BAD)
def test_the_cli_refuses_a_bad_set_before_any_task(name, tmp_path):
    assert_cli_refuses(tmp_path, f"hyperdepth.{name}", CLI_BAD[name])
