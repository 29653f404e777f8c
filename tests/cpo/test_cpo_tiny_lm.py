"""The tiny causal-LM preference task (spec §5.2): task construction, model, training, bad input."""

import copy
import math
from dataclasses import replace

import pytest
import torch

from icml26.core import NonFiniteLossError, RunContext, torch_threads
from icml26.cpo import (
    TinyCausalLM,
    make_arith_preference_task,
    sequence_logps,
    tiny_lm_metrics,
    train_sft,
    train_tiny_lm,
)
from icml26.cpo.experiments.tiny_lm import TINY_LM_PRESETS, tiny_lm


@pytest.fixture(autouse=True)
def one_thread():
    # tiny models: a second intra-op thread only adds contention on a shared 2-core box
    with torch_threads(1):
        yield


def small_lm(task, seed=0):
    return TinyCausalLM(task.vocab_size, d_model=16, n_layers=1, n_heads=2, seed=seed)


def test_task_answers_and_split():
    n = 7
    task = make_arith_preference_task(n_numbers=n, n_types=8, n_violated=3, seed=1)
    prompts = torch.cat([task.train_prompts, task.test_prompts])
    correct = torch.cat([task.train_correct, task.test_correct])
    wrong = torch.cat([task.train_wrong, task.test_wrong])
    op, a, b = prompts[:, 1] - n - 1, prompts[:, 2], prompts[:, 3]
    assert prompts.shape[0] == 8 * n * (n - 1)  # every (op, a ≠ b) exactly once
    assert len({tuple(p) for p in prompts.tolist()}) == prompts.shape[0]
    assert torch.equal(correct, (torch.where(op % 2 == 0, a, b) + op // 2) % n)
    assert torch.equal(wrong, (torch.where(op % 2 == 0, b, a) + op // 2) % n)
    assert bool((correct != wrong).all())
    assert bool((prompts[:, 0] == n).all()) and bool((prompts[:, 4] == n + 9).all())
    assert int(prompts.max()) < task.vocab_size == n + 10
    assert task.violated_types.numel() == 3 and int(task.is_violated(torch.arange(8)).sum()) == 3


def test_model_is_causal_and_seeded():
    task = make_arith_preference_task(n_numbers=5, seed=0)
    lm = small_lm(task)
    tokens = task.test_prompts[:4]
    changed = tokens.clone()
    changed[:, -1] = 0
    with torch.no_grad():
        # changing the last token cannot change the logits of earlier positions
        assert torch.allclose(lm(tokens)[:, :-1], lm(changed)[:, :-1], atol=1e-6)
        assert torch.equal(lm(tokens), small_lm(task)(tokens))  # same seed, same weights
        assert not torch.equal(lm(tokens), small_lm(task, seed=1)(tokens))


def test_model_init_leaves_the_global_rng_alone_and_takes_generators():
    task = make_arith_preference_task(n_numbers=5, seed=0)
    state = torch.random.get_rng_state()
    lm = small_lm(task, seed=4)
    assert torch.equal(torch.random.get_rng_state(), state)
    from_generator = small_lm(task, seed=torch.Generator().manual_seed(4)).state_dict()
    for name, value in lm.state_dict().items():
        assert torch.equal(value, from_generator[name]), name  # int seed = Generator().manual_seed
    weights = lm.head.weight.detach()
    # N(0, 0.02²) weight matrices (0.1 relative: a 16 x 16 sample), zero biases, identity norms
    assert float(weights.std()) == pytest.approx(0.02, rel=0.1)
    assert bool((lm.head.bias == 0).all()) and bool((lm.norm.weight == 1).all())


def test_sft_learns_the_corpus_mixture():
    task = make_arith_preference_task(n_numbers=5, n_types=2, n_violated=1, seed=0)
    lm = TinyCausalLM(task.vocab_size, d_model=32, n_layers=1, n_heads=2, seed=0)
    history = train_sft(lm, task, steps=300, batch_size=64, lr=1e-2, seed=0)
    assert history[-1] < history[0]
    viol = task.is_violated(task.train_type)
    with torch.no_grad():
        probs = torch.softmax(lm(task.train_prompts)[:, -1], -1)
    rows = torch.arange(viol.numel())
    p_wrong, p_correct = probs[rows, task.train_wrong], probs[rows, task.train_correct]
    # soft targets 0.8 / 0.2 on violated types: the habitual wrong answer gets ~0.8 (0.1: 300
    # steps of a 1-layer model, not a converged fit; the 0.2 on the correct one is learnt last)
    assert float(p_wrong[viol].mean()) == pytest.approx(0.8, abs=0.1)
    assert float((p_wrong[viol] > p_correct[viol]).double().mean()) > 0.9  # δ_ref < 0 there
    assert float(p_correct[~viol].mean()) > 0.8  # vs 1/N = 0.2 for an untrained model


def test_policy_equal_to_reference_has_zero_margin_and_empty_u():
    task = make_arith_preference_task(n_numbers=5, seed=0)
    lm = small_lm(task)
    m = tiny_lm_metrics(lm, lm, task)
    assert m["frac_in_U"] == 0.0 and m["frac_in_U_viol"] == 0.0  # U needs δ_θ > δ_ref strictly
    assert m["delta_viol"] == m["delta_ref_viol"]


def test_pair_scores_are_sequence_logps_of_the_answer():
    task = make_arith_preference_task(n_numbers=5, seed=0)
    lm = small_lm(task)
    prompts, answers = task.test_prompts[:3], task.test_correct[:3]
    tokens = torch.cat([prompts, answers[:, None]], 1)
    labels = torch.full_like(tokens, -100)
    labels[:, -1] = answers
    with torch.no_grad():
        by_hand = torch.log_softmax(lm(prompts)[:, -1], -1)[torch.arange(3), answers]
        assert torch.allclose(sequence_logps(lm(tokens), labels), by_hand, atol=1e-6)


def test_dpo_step_does_not_move_the_reference_and_raises_margin():
    task = make_arith_preference_task(n_numbers=5, seed=0, label_flip=0.0)
    ref = small_lm(task)
    train_sft(ref, task, steps=30, batch_size=32, seed=0)
    ref.requires_grad_(False)
    before = copy.deepcopy(ref.state_dict())
    policy = copy.deepcopy(ref).requires_grad_(True)
    out = train_tiny_lm(policy, ref, task, "dpo", steps=20, batch_size=32, lr=1e-2, beta=2.5)
    assert all(torch.equal(before[k], v) for k, v in ref.state_dict().items())
    # without label noise DPO only pushes δ_θ up: its loss falls below log 2
    assert out["metrics"]["loss"] < math.log(2)
    assert out["history"][0] == pytest.approx(math.log(2), abs=1e-6)  # policy = reference


def test_training_reports_progress_and_stops_on_a_non_finite_loss():
    task = make_arith_preference_task(n_numbers=5, seed=0)
    lm = small_lm(task)
    seen = []
    history = train_sft(lm, task, steps=3, batch_size=8, progress=lambda *a: seen.append(a))
    assert [(d, t) for d, t, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    assert [m["loss"] for _, _, m in seen] == history
    seen.clear()
    policy = copy.deepcopy(lm)
    out = train_tiny_lm(
        policy, lm, task, "dpo", steps=2, batch_size=4, progress=lambda *a: seen.append(a)
    )
    assert [m["loss"] for _, _, m in seen] == out["history"]
    with torch.no_grad():
        lm.head.weight.fill_(math.nan)
    before = copy.deepcopy(lm.state_dict())
    with pytest.raises(NonFiniteLossError, match="train_sft: the loss is nan at step 0"):
        train_sft(lm, task, steps=3, batch_size=8)
    # the guard stops before the update: the weights are untouched
    assert all(torch.equal(before[k], v) for k, v in lm.state_dict().items() if "head" not in k)


def test_smoke_experiment_is_deterministic(tmp_path):
    config = TINY_LM_PRESETS["smoke"]
    first = tiny_lm(config, RunContext(seed=3, artifact_dir=tmp_path))
    second = tiny_lm(config, RunContext(seed=3, artifact_dir=tmp_path))
    assert first == second
    assert first["cpo_minus_dpo_em_viol"] == first["cpo_em_viol"] - first["dpo_em_viol"]


def test_bad_input():
    with pytest.raises(ValueError, match="n_violated must be <= n_types"):
        make_arith_preference_task(n_types=2, n_violated=3)
    with pytest.raises(ValueError, match="wrong_frac must be in"):
        make_arith_preference_task(wrong_frac=1.0)
    with pytest.raises(ValueError, match="label_flip must be in"):
        make_arith_preference_task(label_flip=0.5)
    with pytest.raises(ValueError, match="d_model must be divisible by n_heads"):
        TinyCausalLM(10, d_model=10, n_heads=3)
    task = make_arith_preference_task(n_numbers=5, seed=0)
    lm = small_lm(task)
    with pytest.raises(ValueError, match="method must be one of"):
        train_tiny_lm(lm, lm, task, "ipo")
    with pytest.raises(ValueError, match=r"steps must be an integer in \[1, 1000000\]"):
        train_sft(lm, task, steps=0)
    assert replace(TINY_LM_PRESETS["quick"], steps=1).steps == 1  # presets are frozen dataclasses


def test_quick_loads_the_shipped_sft_references_and_only_for_their_settings():
    """Issue 51: quick's three seeds find their shipped reference; another SFT setting trains."""
    from dataclasses import replace

    from icml26.core.runner import derive_seed
    from icml26.cpo.experiments.tiny_lm import TINY_LM_PRESETS
    from icml26.cpo.standins import shipped_reference

    quick = TINY_LM_PRESETS["quick"]
    for i in range(3):
        model, loss = shipped_reference(quick, derive_seed("cpo.tiny_lm", quick, i))
        assert not model.training and 0.0 < loss < 1.0
    assert shipped_reference(quick, 12345) is None
    other = replace(quick, sft_steps=601)
    assert shipped_reference(other, derive_seed("cpo.tiny_lm", other, 0)) is None
