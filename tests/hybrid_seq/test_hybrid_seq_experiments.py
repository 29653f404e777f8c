"""The registered reproductions: their set, one thread each, and where each claim's target comes
from (the paper's full text was not available: only the abstract is a "paper" source)."""

from icml26.core import REGISTRY, Resources, discover


def test_experiments_are_registered_with_one_thread_and_sourced_claims():
    discover()
    experiments = {e.name: e for e in REGISTRY.of_system("hybrid_seq")}
    assert set(experiments) == {
        f"hybrid_seq.{n}"
        for n in ("constructions", "mqar_smoke", "param_efficiency", "length_gen", "ood")
    }
    for experiment in experiments.values():
        assert experiment.resources == Resources(cpus=1)  # small tensors: one thread
        for claim in experiment.claims:
            assert claim.source in ("paper", "spec")
            assert claim.source != "paper" or "abstract" in claim.where
