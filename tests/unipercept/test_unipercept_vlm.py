"""The tiny real InternVL (issue 44): architecture, tokenizer, Token-As-Score from lm_head,
letter choice, question text and layout reach the answer, training through the shared stages."""

import json

import numpy as np
import pytest
import torch
from transformers import InternVLForConditionalGeneration, Qwen2ForCausalLM

from icml26.unipercept import (
    QUESTION_BANK,
    SCORE_TOKENS,
    PerceptPolicy,
    PerceptVLM,
    VQAItem,
    bank_texts,
    grpo_step,
    make_iqa_vqa,
    make_iqa_vr,
    make_text_dependent_vqa,
    percept_reward_fn,
    prompt_text,
    train_dapt,
    train_grpo,
)


def tiny(**kwargs):
    sizes = {"vision_hidden": 16, "text_hidden": 32, "vision_layers": 1, "text_layers": 1}
    return PerceptVLM(16, **{**sizes, **kwargs})


def test_default_is_a_two_plus_four_layer_internvl_with_pixel_shuffle():
    model = PerceptVLM(32)
    assert isinstance(model.model, InternVLForConditionalGeneration)
    config = model.model.config
    assert config.vision_config.num_hidden_layers == 2 and config.text_config.num_hidden_layers == 4
    assert config.text_config.model_type == "qwen2" and config.downsample_ratio == 0.5
    assert model.n_image_tokens == 16  # (32 / 4)^2 patches, 4 per token after pixel shuffle
    images = torch.zeros(2, 3, 32, 32)
    features = model.model.get_image_features(
        pixel_values=images, vision_feature_layer=-1, vision_feature_select_strategy="default"
    )
    assert tuple(features.pooler_output.shape) == (2, 16, config.text_config.hidden_size)
    assert not isinstance(model.model, Qwen2ForCausalLM)


def test_tokenizer_holds_the_bank_the_score_tokens_and_the_letters():
    tok = PerceptVLM(16, vision_hidden=8, text_hidden=8, vision_layers=1, text_layers=1).tokenizer
    for text in bank_texts():
        assert tok.unk_token_id not in tok.encode(text, add_special_tokens=False), text
    for word in (*SCORE_TOKENS, "A", "B", "C", "D", "<IMG_CONTEXT>"):
        ids = tok.encode(word, add_special_tokens=False)
        assert len(ids) == 1 and tok.convert_ids_to_tokens(ids) == [word]
    assert tok.unk_token_id in tok.encode("zebra", add_special_tokens=False)


def test_rating_is_the_token_as_score_expectation_of_lm_head():
    model = tiny(seed=1)
    items = make_iqa_vr(5, seed=0, size=16)
    batch = model.encode(items)
    out = model.model(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=(batch.attention_mask.cumsum(1) - 1).clamp(min=0),
        pixel_values=(batch.images - torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        / torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1),
    )
    logits = out.logits[:, -1, model.score_ids]
    expected = (torch.softmax(logits, -1) @ torch.arange(101.0)).detach().numpy()
    rated = model.rate(np.stack([it.image for it in items]), "IQA")
    np.testing.assert_allclose(rated, expected, rtol=1e-5)


def test_choice_is_the_best_letter_among_the_items_options():
    model = tiny(seed=2)
    items = make_text_dependent_vqa(6, seed=0, size=16) + make_iqa_vqa(6, seed=1, size=16)
    logits = model(model.encode(items))
    letters = model.choose(items)
    for it, row, letter in zip(items, logits, letters, strict=True):
        k = len(it.options)
        assert torch.isinf(row[k:]).all() and letter == "ABCD"[int(row[:k].argmax())]


def _same_image(question_a, question_b):
    image = make_iqa_vr(1, seed=3, size=16)[0].image
    path = ("IQA", "Distortion Type", "Distortion Types Present", "Yes-No")
    return [VQAItem(image, *path, q, ("Yes", "No"), "A") for q in (question_a, question_b)]


def test_the_question_text_reaches_the_answer_unless_the_model_is_blind():
    items = _same_image("Does this image show blur?", "Does this image show noise?")
    reads = tiny(seed=4)(tiny(seed=4).encode(items))
    assert not torch.allclose(reads[0, :2], reads[1, :2])
    blind = tiny(seed=4, question_blind=True)
    out = blind(blind.encode(items))
    torch.testing.assert_close(out[0, :2], out[1, :2])
    assert "blur" not in prompt_text(items[0], question_blind=True)


def test_the_model_sees_where_swapping_quadrants_changes_its_rating():
    model = tiny(seed=5)
    image = make_iqa_vr(1, seed=4, size=16)[0].image
    swapped = np.concatenate([image[8:], image[:8]], axis=0)
    a, b = model.rate(np.stack([image, swapped]), "IQA")
    assert abs(a - b) > 1e-4  # mean/std pooling (TinyPercept) would give a == b


def test_text_dependent_items_are_balanced_and_answered_by_the_question():
    items = make_text_dependent_vqa(200, seed=0, size=16)
    answers = np.array([it.answer for it in items])
    assert 0.4 < np.mean(answers == "A") < 0.6
    for it in items:
        assert (it.meta["shown"] == it.meta["asked"]) == (it.answer == "A")
    rng = np.random.default_rng(0)
    item = make_iqa_vqa(1, seed=0, size=16)[0]
    drawn = {prompt_text(item, rng).split(" A. ")[0] for _ in range(30)}
    assert drawn == {item.question, *QUESTION_BANK[item.question]}


def test_dapt_lowers_the_loss_and_grpo_logs_kl_to_the_reference():
    torch.manual_seed(0)
    model = tiny(seed=6)
    data = make_iqa_vr(16, seed=0, size=16) + make_text_dependent_vqa(16, seed=1, size=16)
    history = train_dapt(model, data, epochs=4, batch_size=8, lr=3e-3, seed=0)
    assert history.epoch_loss[-1] < history.epoch_loss[0]
    ref = PerceptVLM(**model.config())
    ref.load_state_dict(model.state_dict())
    frozen = {k: v.clone() for k, v in ref.state_dict().items()}
    first = grpo_step(
        PerceptPolicy(model, seed=0),
        PerceptPolicy(ref, seed=0),
        model.encode(data[:8]),
        percept_reward_fn(),
        n=4,
    )
    assert first.kl == pytest.approx(0.0, abs=1e-6)  # equal weights: KL 0
    model.zero_grad()
    stats = train_grpo(model, ref, data, steps=3, batch_size=8, n=4, lr=1e-2, seed=0)
    assert stats[-1].kl > 0 and all(np.isfinite(s.kl) for s in stats)
    torch.testing.assert_close(ref.state_dict(), frozen)  # pi_ref stays the DAPT model


def test_save_and_load_round_trip_and_refuse_a_foreign_config(tmp_path):
    model = tiny(seed=7)
    items = make_iqa_vr(3, seed=0, size=16)
    model.save_pretrained(tmp_path / "m")
    again = PerceptVLM.from_pretrained(tmp_path / "m")
    torch.testing.assert_close(again(again.encode(items)), model(model.encode(items)))
    (tmp_path / "m" / "config.json").write_text(json.dumps({"channels": [4, 4, 4, 4]}))
    with pytest.raises(ValueError, match="PerceptVLM"):
        PerceptVLM.from_pretrained(tmp_path / "m")


def test_constructor_checks_its_arguments():
    with pytest.raises(ValueError, match="image_size"):
        PerceptVLM(20)
    with pytest.raises(ValueError, match="text_hidden"):
        PerceptVLM(16, text_hidden=12)
    with pytest.raises(TypeError, match="question_blind"):
        PerceptVLM(16, question_blind=1)
    with pytest.raises(ValueError, match="16 px"):
        tiny().encode(make_iqa_vr(1, seed=0, size=32))
