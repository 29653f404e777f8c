"""TinyOpenVLA (SigLIP + MLP + Llama from transformers), its checkpoints, the shuffled-tau
control, the oracle verifier and the v1 config (issues 40 and 41)."""

import dataclasses

import numpy as np
import pytest
import torch
from transformers import LlamaForCausalLM, SiglipVisionModel

from icml26.core import torch_threads
from icml26.core.standins import save_checkpoint
from icml26.scale import (
    POLICIES_V1,
    POLICIES_V1_ALLOCENTRIC,
    AmbiguousReach2DV1Env,
    AttentionTemperature,
    BestOfN,
    GreedyDecoder,
    OracleVerifier,
    ScaleDecoder,
    SharedPrefixAdapter,
    ShuffledTauDecoder,
    TemperatureDecoder,
    TinyOpenVLA,
    TinyVLAAdapter,
    UncertaintyState,
    count_forward_passes,
    evaluate,
    evaluate_many,
    load_policy,
    policy_view,
)
from icml26.scale.experiments.reach_v1 import ReachV1Config, auroc

SMALL = {"d_vision": 16, "d_model": 16, "heads": 2, "mlp_ratio": 2}


@pytest.fixture(autouse=True)
def _one_torch_thread():
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def batch():
    g = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (3, 32, 32, 3), dtype=torch.uint8, generator=g)
    return images, torch.tensor([0, 3, 7]), torch.randint(8, 264, (3, 3), generator=g)


def test_built_from_hf_classes_with_action_bins_last(batch):
    model = TinyOpenVLA(seed=0, **SMALL)
    assert isinstance(model.vision, SiglipVisionModel) and isinstance(model.llm, LlamaForCausalLM)
    assert model.llm.config.vocab_size == 264 and model.action_token_range == (8, 264)
    assert type(model.vision_attention_modules()[0]).__name__ == "SiglipAttention"
    patch = TinyOpenVLA(seed=0, stem="patch", **SMALL)  # SigLIP's own patch embedding
    assert isinstance(patch.vision.embeddings.patch_embedding, torch.nn.Conv2d)
    assert patch.prefill(*batch[:2])[0].shape == (3, 264)


def test_kv_cache_decoding_equals_full_forward(batch):
    model = TinyOpenVLA(seed=1, **SMALL).eval()
    images, instr, tokens = batch
    with torch.no_grad():
        full = model(images, instr, tokens)
        logits, cache = model.prefill(images, instr)
        steps = [logits]
        for k in range(2):
            logits, cache = model.step(tokens[:, k], cache)
            steps.append(logits)
    torch.testing.assert_close(torch.stack(steps, 1), full, atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="decoded"):
        model.step(tokens[:, 2], cache)
    with pytest.raises(ValueError, match="instructions"):
        model.prefill(images, torch.tensor([0, 3, 8]))
    with pytest.raises(ValueError, match="shape"):
        model.prefill(images[:, :16], instr)


def test_vision_temperature_and_single_pass_cost(batch):
    model = TinyOpenVLA(seed=2, **SMALL).eval()
    adapter = TinyVLAAdapter(model)
    images, instr, _ = batch
    with torch.no_grad():
        plain = model.prefill(images, instr)[0]
        with AttentionTemperature(model.vision_attention_modules(), 1.0):
            same = model.prefill(images, instr)[0]
        with AttentionTemperature(model.vision_attention_modules(), 2.0):
            hot = model.prefill(images, instr)[0]
    assert torch.equal(plain, same) and not torch.allclose(plain, hot)
    for decoder in (GreedyDecoder(), ScaleDecoder(seed=0)):
        state = UncertaintyState(3, batch_size=3)
        with count_forward_passes(model) as counts:
            for _ in range(2):
                decoder.decode(adapter, images, instr, state)
        assert counts == {"decoder": 6, "vision": 2}  # 1 prefix + 2 cached per step


def test_checkpoint_round_trip_and_architecture_check(tmp_path, batch):
    model = TinyOpenVLA(seed=3, **SMALL).eval()
    save_checkpoint(
        tmp_path / "p", model, {"config": {"architecture": "TinyOpenVLA", **model.config}}
    )
    loaded, _ = load_policy(tmp_path / "p")
    with torch.no_grad():
        assert torch.equal(loaded.prefill(*batch[:2])[0], model.prefill(*batch[:2])[0])
    save_checkpoint(tmp_path / "q", model, {"config": {"architecture": "Evil", **model.config}})
    with pytest.raises(ValueError, match="not a TinyARVLA or TinyOpenVLA"):
        load_policy(tmp_path / "q")
    save_checkpoint(tmp_path / "r", model, {"config": {"architecture": "TinyOpenVLA", "x": 1}})
    with pytest.raises(ValueError, match="keywords"):
        load_policy(tmp_path / "r")


def test_shipped_v1_policies_load_with_their_recipe():
    for names, view in ((POLICIES_V1, "egocentric"), (POLICIES_V1_ALLOCENTRIC, "allocentric")):
        seeds = []
        for name in names:
            model, meta = load_policy(name)
            assert isinstance(model, TinyOpenVLA)
            assert meta["config"]["architecture"] == "TinyOpenVLA"
            assert meta["command"] == f"icml26 tool scale train-standin {name}"
            assert 0.0 < meta["metrics"]["heldout_token_accuracy"] <= 1.0
            assert policy_view(meta) == view
            seeds.append(meta["recipe"]["seed"])
        assert seeds == [0, 1, 2]  # three independently trained policies
    assert ReachV1Config().policies == POLICIES_V1  # what scale.reach_v1 evaluates


def test_shuffled_tau_keeps_the_temperatures_but_not_their_conditioning():
    pools = [[0.9], [0.01, 0.5], [0.02]]
    decoder = ShuffledTauDecoder(pools, seed=0)
    logits = torch.zeros(500, 256)
    logits[:, 0] = 10.0  # a confident token: SCALE's own tau would be tiny
    taus = [decoder._tau(logits, torch.full((500,), -5.0), 256) for _ in range(3)]
    assert torch.all(taus[0] == 0.9) and torch.all(taus[2] == 0.02)
    assert set(taus[1].tolist()) == {0.01, 0.5}
    for bad, error in (([], TypeError), ([[0.0]], ValueError), ([[float("nan")]], ValueError)):
        with pytest.raises(error, match="pools"):
            ShuffledTauDecoder(bad)


def test_oracle_verifier_prefers_the_expert_like_candidate():
    verifier = OracleVerifier()
    with pytest.raises(ValueError, match="unset"):
        verifier(None, None, torch.zeros(1, 2, 3, dtype=torch.long))
    verifier.expert = np.array([[1.0, -1.0, 1.0]])
    # token 8 = +1 (bin 254), token 263 = -1 (bin 0)
    candidates = torch.tensor([[[263, 8, 263], [8, 263, 8], [8, 263, 263]]])
    assert verifier(None, None, candidates).argmax(1).tolist() == [1]


def test_auroc_against_a_direct_count():
    rng = np.random.default_rng(0)
    scores, labels = rng.normal(size=60), rng.random(60) < 0.3
    pairs = [(s > t) + 0.5 * (s == t) for s in scores[labels] for t in scores[~labels]]
    assert auroc(scores, labels) == pytest.approx(np.mean(pairs))
    assert np.isnan(auroc(scores, np.zeros(60, dtype=bool)))


def test_config_validates_its_fields():
    config = ReachV1Config()
    assert dataclasses.replace(config, policies=["a", "b"]).policies == ("a", "b")
    for field, value, match in (
        ("episodes", 0, "episodes"),
        ("episodes", True, "episodes"),
        ("splits", ("mars",), "splits"),
        ("decoders", ("greedy",), "scale"),
        ("decoders", ("greedy", "scale", "nope"), "decoders"),
        ("best_of", 1000, "best_of"),
        ("policies", (), "policies"),
    ):
        with pytest.raises(ValueError, match=match):
            dataclasses.replace(config, **{field: value})


def test_evaluate_many_matches_each_decoder_evaluated_alone():
    """One lock-step batch of greedy, SCALE (vision tempering on its rows only) and a sampler
    gives each decoder the episodes, draws and records it gets alone."""
    adapter = TinyVLAAdapter(load_policy("reach_v1_s0")[0])
    env = AmbiguousReach2DV1Env("id", max_steps=12)

    def decoders():
        return [GreedyDecoder(), ScaleDecoder(seed=1), TemperatureDecoder(1.0, seed=2)]

    with torch.no_grad():
        together = evaluate_many(decoders(), env, 6, [3], adapter, oracle=True)
        alone = [evaluate(d, env, 6, [3], adapter, oracle=True) for d in decoders()]
    for joint, single in zip(together, alone, strict=True):
        np.testing.assert_array_equal(joint.episode_success, single.episode_success)
        np.testing.assert_allclose(joint.token_u, single.token_u, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(joint.token_tau > 0, single.token_tau > 0)
        assert joint.forward_passes_per_step == single.forward_passes_per_step == 3.0
    assert together[1].gamma_trace != [1.0] * len(together[1].gamma_trace)  # SCALE tempered
    assert together[0].gamma_trace == [1.0] * len(together[0].gamma_trace)  # greedy did not
    best = BestOfN(lambda o, i, c: torch.zeros(c.shape[:2]), n=2, seed=0)
    with pytest.raises(ValueError, match="alone"):
        evaluate_many([GreedyDecoder(), best], env, 2, [0], adapter)
    greedy = GreedyDecoder()
    with pytest.raises(ValueError, match="distinct"):
        evaluate_many([greedy, greedy], env, 2, [0], adapter)
    with pytest.raises(TypeError, match="decoders"):
        evaluate_many([], env, 2, [0], adapter)


def test_best_of_n_candidates_sharing_one_prefix_pass_are_unchanged():
    """reach_v1 computes Best-of-N's identical prefix passes once: same candidates, same draws."""
    adapter = TinyVLAAdapter(load_policy("reach_v1_s1")[0])
    env = AmbiguousReach2DV1Env("id", max_steps=10)
    results = []
    for shared in (adapter, SharedPrefixAdapter(adapter.model)):
        with torch.no_grad(), count_forward_passes(adapter.model) as counts:
            bon = BestOfN(OracleVerifier(), n=3, seed=5)
            results.append((evaluate(bon, env, 5, [2], shared, oracle=True), dict(counts)))
    (plain, plain_counts), (shared, shared_counts) = results
    np.testing.assert_array_equal(plain.episode_success, shared.episode_success)
    np.testing.assert_array_equal(plain.token_u, shared.token_u)
    np.testing.assert_array_equal(plain.token_error, shared.token_error)
    assert plain.forward_passes_per_step == shared.forward_passes_per_step == 9.0
    assert shared_counts["vision"] * 3 == plain_counts["vision"]  # one prefix pass, not three
