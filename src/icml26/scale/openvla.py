"""The real-scale path: OpenVLA through transformers, and the LIBERO protocol (spec §5).

``load_openvla`` loads an OpenVLA checkpoint (a LIBERO suite name, a hub id or a local folder) with
``AutoModelForVision2Seq.from_pretrained`` (``AutoModelForImageTextToText`` on transformers >= 5,
where the former was removed). The hub's OpenVLA keeps its model classes in the checkpoint, so it
needs ``trust_remote_code=True``, which is opt-in (default False) and should come with a
``revision=`` pin; the config's architecture is checked before any weights are built.
:class:`OpenVLAAdapter` is the :class:`VLAAdapter` over it: prefill = the multimodal forward with a
KV cache, step = one cached language-model token, detokenize = OpenVLA's bin centres then q01/q99
un-normalisation (masked dimensions pass through), and ``predict_action`` is
``OpenVLAForActionPrediction.predict_action`` with the decoder of your choice (greedy reproduces
it). ``run_libero`` follows the official ``run_libero_eval.py`` protocol (§2.5): 50 trials per
task, 10 no-op wait steps, per-suite step limits, 180°-rotated 256-px agent-view image, gripper
normalised to {-1, +1} and inverted, SCALE state reset every episode.

Tested on a tiny stand-in (an HF GPT-2 whose last 256 ids are action bins, an HF ViT, a JSON of
statistics) saved to a temporary folder; OpenVLA-7B itself and LIBERO (not installable here) are
not run. The timm vision towers of OpenVLA expose a fused ``qkv``: :class:`AttentionTemperature`
handles it (untested here, timm does not run on this machine).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from icml26.core.imports import require
from icml26.core.validation import check_one_of, check_positive_int
from icml26.scale.decoding import Decoder, GreedyDecoder
from icml26.scale.tokenizer import ActionTokenizer
from icml26.scale.uncertainty import UncertaintyState

__all__ = [
    "LIBERO_MAX_STEPS",
    "OPENVLA_LIBERO",
    "OpenVLAAdapter",
    "load_openvla",
    "run_libero",
]

OPENVLA_LIBERO = {
    s: f"openvla/openvla-7b-finetuned-libero-{s}" for s in ("spatial", "object", "goal", "10")
}
LIBERO_MAX_STEPS = {"spatial": 220, "object": 280, "goal": 300, "10": 520}
UNNORM_KEYS = {s: f"libero_{s}_no_noops" for s in OPENVLA_LIBERO}
PROMPT = "In: What action should the robot take to {instruction}?\nOut:"
EMPTY_TOKEN = 29871  # Llama-2's "▁": OpenVLA's predict_action appends it before decoding
_ATTENTION_NAMES = (("q_proj", "k_proj", "v_proj"), ("query", "key", "value"), ("qkv",))


def _auto_model_class(transformers: Any) -> Any:
    for name in ("AutoModelForVision2Seq", "AutoModelForImageTextToText"):
        if hasattr(transformers, name):
            return getattr(transformers, name)
    raise ImportError(
        "transformers has neither AutoModelForVision2Seq nor AutoModelForImageTextToText."
    )


def load_openvla(
    suite_or_dir: str,
    dtype: str = "bfloat16",
    device: str = "cpu",
    attn_implementation: str | None = None,
    load_processor: bool = True,
    trust_remote_code: bool = False,
    revision: str | None = None,
) -> tuple[nn.Module, Any]:
    """Load an OpenVLA checkpoint and its processor.

    Parameters
    ----------
    suite_or_dir
        ``"spatial"``, ``"object"``, ``"goal"`` or ``"10"`` (the LIBERO fine-tunes on the hub), a
        hub id, or a local folder saved with ``save_pretrained``.
    dtype
        ``"bfloat16"`` (the paper's), ``"float16"`` or ``"float32"``.
    device
        Where the model goes (``"cuda:0"`` for the real model).
    attn_implementation
        Passed to ``from_pretrained`` (``"flash_attention_2"`` or ``"sdpa"`` for the LLM).
    load_processor
        Also load ``AutoProcessor``; None is returned if False.
    trust_remote_code
        Run the modelling code shipped inside the checkpoint (default False). OpenVLA's hub
        checkpoints keep their model classes there, so they need True; pin ``revision`` too.
    revision
        The hub revision (a commit hash pins exactly the code and weights you reviewed); passed
        to every ``from_pretrained``. A warning is issued when remote code runs unpinned.

    Returns
    -------
    (model, processor)

    Raises
    ------
    MissingExtraError
        transformers is not installed.
    ValueError
        The checkpoint is not an OpenVLA-style (vision-to-text) model, or it needs remote code
        and ``trust_remote_code`` is False; checked on the config, before any weights load.

    Examples
    --------
    >>> load_openvla("10", trust_remote_code="yes")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    TypeError: load_openvla: trust_remote_code must be a bool; got str.
    """
    import warnings

    owner = "load_openvla"
    if not isinstance(suite_or_dir, (str, Path)):
        raise TypeError(
            f"{owner}: suite_or_dir must be a str or a path; got {type(suite_or_dir).__name__}."
        )
    for flag, value in (("load_processor", load_processor),
                        ("trust_remote_code", trust_remote_code)):  # fmt: skip
        if not isinstance(value, bool):
            raise TypeError(f"{owner}: {flag} must be a bool; got {type(value).__name__}.")
    if revision is not None and (
        not isinstance(revision, str) or not revision.strip() or len(revision) > 256
    ):
        raise TypeError(f"{owner}: revision must be None or a non-empty str (a commit hash).")
    check_one_of("dtype", dtype, ("bfloat16", "float16", "float32"), owner=owner)
    transformers = require("transformers", "scale", owner=owner)
    name = OPENVLA_LIBERO.get(str(suite_or_dir), str(suite_or_dir))
    looks_like_hub_id = name.count("/") == 1 and not name.startswith(("/", "."))
    if not (Path(name).is_dir() or looks_like_hub_id):
        raise FileNotFoundError(f"{owner}: suite_or_dir {name!r} is no suite, folder or hub id.")
    if trust_remote_code and revision is None and not Path(name).is_dir():
        warnings.warn(
            f"{owner}: trust_remote_code=True runs the code of {name!r} at its latest revision; "
            "pin revision= to the commit you reviewed.",
            UserWarning,
            stacklevel=2,
        )
    common: dict[str, Any] = {"trust_remote_code": trust_remote_code, "revision": revision}
    auto = _auto_model_class(transformers)
    try:
        config = transformers.AutoConfig.from_pretrained(name, **common)
    except ValueError as err:
        hint = (
            " OpenVLA keeps its model classes in the checkpoint: pass trust_remote_code=True "
            "with a pinned revision= to run them."
            if not trust_remote_code
            else ""
        )
        raise ValueError(f"{owner}: {name!r} could not be loaded: {err}.{hint}") from None
    model_type = getattr(config, "model_type", None)
    if model_type != "openvla" and type(config) not in auto._model_mapping:
        raise ValueError(
            f"{owner}: {name!r} is a {model_type!r} checkpoint, not an OpenVLA-style "
            f"vision-to-text model ({auto.__name__}); nothing was built."
        )
    kwargs: dict[str, Any] = {**common, "dtype": getattr(torch, dtype)}
    if attn_implementation is not None:
        kwargs["attn_implementation"] = attn_implementation
    try:
        model = auto.from_pretrained(name, **kwargs).to(device).eval()
    except ValueError as err:  # e.g. an invalid hub id
        raise ValueError(f"{owner}: suite_or_dir {name!r} could not be loaded: {err}") from None
    processor = None
    if load_processor:
        processor = transformers.AutoProcessor.from_pretrained(name, **common)
    return model, processor


def _norm_stats(model: nn.Module, unnorm_key: str | None, stats_path: str | Path | None) -> dict:
    if stats_path is not None:
        stats = json.loads(Path(stats_path).read_text())
    else:
        stats = getattr(model, "norm_stats", None)
        if stats is None:
            path = getattr(model, "name_or_path", None) or getattr(
                getattr(model, "config", None), "_name_or_path", ""
            )
            candidate = Path(path) / "dataset_statistics.json"
            stats = json.loads(candidate.read_text()) if candidate.is_file() else {}
    if not stats:
        raise ValueError("OpenVLAAdapter: no action statistics (model.norm_stats or stats_path).")
    if unnorm_key is None:
        if len(stats) != 1:
            raise ValueError(f"OpenVLAAdapter: unnorm_key must name one of {sorted(stats)}.")
        unnorm_key = next(iter(stats))
    if unnorm_key not in stats:
        raise ValueError(
            f"OpenVLAAdapter: unnorm_key must be one of {sorted(stats)}; got {unnorm_key!r}."
        )
    action = stats[unnorm_key]["action"]
    return {k: np.asarray(v) for k, v in action.items() if k in ("q01", "q99", "mask")}


class OpenVLAAdapter:
    """:class:`VLAAdapter` over an OpenVLA-style model (``predict_action``-compatible).

    Parameters
    ----------
    model
        An OpenVLA (``OpenVLAForActionPrediction``) or a model with its interface: called with
        ``input_ids``, ``pixel_values``, ``attention_mask``, ``use_cache`` (prefix) or
        ``input_ids`` + ``past_key_values`` (one cached token), returning ``.logits`` and
        ``.past_key_values``; a ``vision_backbone`` module; ``config.text_config.vocab_size``.
    processor
        ``processor(prompt, image)`` -> ``input_ids``, ``attention_mask``, ``pixel_values``.
    unnorm_key
        The dataset whose q01/q99 statistics un-normalise actions (e.g. ``"libero_10_no_noops"``).
    stats_path
        A ``dataset_statistics.json`` to read instead of ``model.norm_stats``.
    n_action_tokens, n_bins
        K_a (7) and the number of bin edges (256).
    vocab_size
        The text vocabulary without padding (default ``config.text_config.vocab_size -
        config.pad_to_multiple_of``, as OpenVLA); action ids are its last 256.
    append_token
        Token appended to the prompt when missing (OpenVLA: 29871; ``None``: nothing).
    prompt
        The prompt template with ``{instruction}``.
    """

    def __init__(
        self,
        model: nn.Module,
        processor: Any,
        unnorm_key: str | None = None,
        stats_path: str | None = None,
        n_action_tokens: int = 7,
        n_bins: int = 256,
        vocab_size: int | None = None,
        append_token: int | None = EMPTY_TOKEN,
        prompt: str = PROMPT,
    ) -> None:
        owner = "OpenVLAAdapter"
        if not isinstance(model, nn.Module) or not isinstance(
            getattr(model, "vision_backbone", None), nn.Module
        ):
            raise TypeError(
                f"{owner}: model must be an nn.Module with a vision_backbone; "
                f"got {type(model).__name__}."
            )
        if not callable(processor):
            raise TypeError(
                f"{owner}: processor must be callable(prompt, image); "
                f"got {type(processor).__name__}."
            )
        if not isinstance(prompt, str) or "{instruction}" not in prompt:
            raise ValueError(f"{owner}: prompt must contain '{{instruction}}'; got {prompt!r}.")
        self.model, self.processor, self.prompt = model, processor, prompt
        self.num_action_tokens = check_positive_int(
            "n_action_tokens", n_action_tokens, owner=owner, maximum=64
        )
        if vocab_size is None:
            config = model.config
            text = getattr(config, "text_config", config)
            vocab_size = int(text.vocab_size) - int(getattr(config, "pad_to_multiple_of", 0) or 0)
        self.tokenizer = ActionTokenizer(vocab_size, n_bins)
        self.action_token_range = self.tokenizer.token_range
        self.append_token = append_token
        self.stats = _norm_stats(model, unnorm_key, stats_path)

    def vision_attention_modules(self) -> list[nn.Module]:
        """Every self-attention module of the vision backbone (timm, HF ViT/SigLIP, q/k/v)."""
        found = []
        for module in self.model.vision_backbone.modules():
            for names in _ATTENTION_NAMES:
                if all(isinstance(getattr(module, n, None), nn.Module) for n in names):
                    found.append(module)
                    break
        return found

    def _inputs(self, obs: Any, instruction: str) -> dict[str, torch.Tensor]:
        if not isinstance(instruction, str):
            raise TypeError(
                f"OpenVLAAdapter: instruction must be a str; got {type(instruction).__name__}."
            )
        inputs = dict(self.processor(self.prompt.format(instruction=instruction.lower()), obs))
        param = next(self.model.parameters())
        inputs = {k: torch.as_tensor(v).to(param.device) for k, v in inputs.items()}
        inputs["pixel_values"] = inputs["pixel_values"].to(param.dtype)
        ids = inputs["input_ids"]
        if self.append_token is not None and int(ids[0, -1]) != self.append_token:
            extra = torch.full(
                (ids.shape[0], 1), self.append_token, dtype=ids.dtype, device=ids.device
            )
            inputs["input_ids"] = torch.cat([ids, extra], dim=1)
            if "attention_mask" in inputs:
                mask = inputs["attention_mask"]
                inputs["attention_mask"] = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=1)
        return inputs

    def prefill(self, obs: Any, instruction: Any) -> tuple[torch.Tensor, Any]:
        """The multimodal forward over [image, prompt] with a KV cache."""
        out = self.model(**self._inputs(obs, instruction), use_cache=True)
        return out.logits[:, -1].float(), out.past_key_values

    def step(self, token: torch.Tensor, cache: Any) -> tuple[torch.Tensor, Any]:
        """One cached language-model pass for the fed-back token."""
        out = self.model(input_ids=token.reshape(-1, 1), past_key_values=cache, use_cache=True)
        return out.logits[:, -1].float(), out.past_key_values

    def detokenize(self, tokens: torch.Tensor) -> np.ndarray:
        """Token ids ``(B, 7)`` -> actions in robot units (q01/q99; masked dims stay normalised)."""
        normalized = self.tokenizer.decode(np.asarray(tokens.detach().cpu()))
        low, high = self.stats["q01"], self.stats["q99"]
        mask = self.stats.get("mask", np.ones_like(low, dtype=bool)).astype(bool)
        return np.where(mask, 0.5 * (normalized + 1) * (high - low) + low, normalized)

    def predict_action(
        self,
        image: Any,
        instruction: str,
        decoder: Decoder | None = None,
        state: UncertaintyState | None = None,
    ) -> np.ndarray:
        """One action ``(7,)`` as ``OpenVLAForActionPrediction.predict_action`` (greedy default)."""
        decoder = GreedyDecoder() if decoder is None else decoder
        tokens, _ = decoder.decode(self, image, instruction, state)
        return self.detokenize(tokens)[0]


def _libero_gripper(action: np.ndarray) -> np.ndarray:
    """OpenVLA's LIBERO post-processing: gripper [0, 1] -> {-1, +1}, then inverted (-1 = open)."""
    action = np.array(action, dtype=np.float64)
    action[..., -1] = -np.sign(2.0 * action[..., -1] - 1.0)
    return action


def _center_crop(image: np.ndarray, area: float = 0.9) -> np.ndarray:
    """OpenVLA's test-time centre crop: the central ``area`` fraction, resized back (PIL)."""
    from PIL import Image

    h, w = image.shape[:2]
    side = np.sqrt(area)
    ch, cw = round(h * side), round(w * side)
    top, left = (h - ch) // 2, (w - cw) // 2
    crop = Image.fromarray(image[top : top + ch, left : left + cw])
    return np.asarray(crop.resize((w, h), Image.Resampling.BILINEAR))


def run_libero(
    decoder: Decoder,
    suite: str,
    trials: int = 50,
    adapter: OpenVLAAdapter | None = None,
    seed: int = 7,
    resolution: int = 256,
    num_wait_steps: int = 10,
    center_crop: bool = True,
    trust_remote_code: bool = False,
    revision: str | None = None,
) -> dict[str, Any]:
    """Success rate of ``decoder`` on a LIBERO suite with the official evaluation protocol.

    Parameters
    ----------
    decoder
        Any :class:`Decoder`; a :class:`~icml26.scale.decoding.ScaleDecoder` gets a fresh state
        every episode.
    suite
        ``"spatial"``, ``"object"``, ``"goal"`` or ``"10"``.
    trials
        Episodes per task (official: 50), at most 500.
    adapter
        An :class:`OpenVLAAdapter`; default: the suite's OpenVLA fine-tune on ``cuda:0``.
    seed, resolution, num_wait_steps
        The protocol's seed (7), render size (256) and no-op steps while objects settle (10).
    center_crop
        Crop the central 90 % of the image area and resize back (the LIBERO fine-tunes were
        trained with random crops).
    trust_remote_code, revision
        Passed to :func:`load_openvla` when ``adapter`` is None (OpenVLA's hub checkpoints need
        ``trust_remote_code=True``; pin ``revision``).

    Returns
    -------
    dict
        ``success_rate``, ``per_task`` success rates and ``episodes``.

    Raises
    ------
    MissingExtraError
        The ``libero`` package (user-installed, with its assets) is missing.
    """
    owner = "run_libero"
    if not isinstance(decoder, Decoder):
        raise TypeError(f"{owner}: decoder must be a Decoder; got {type(decoder).__name__}.")
    check_one_of("suite", suite, tuple(LIBERO_MAX_STEPS), owner=owner)
    trials = check_positive_int("trials", trials, owner=owner, maximum=500)
    benchmark = require("libero.libero.benchmark", "scale", owner=f"{owner} (install LIBERO)")
    envs = require("libero.libero.envs", "scale", owner=f"{owner} (install LIBERO)")
    libero_root = require("libero.libero", "scale", owner=owner)
    if adapter is None:
        model, processor = load_openvla(
            suite, device="cuda:0", attn_implementation="flash_attention_2",
            trust_remote_code=trust_remote_code, revision=revision,
        )  # fmt: skip
        adapter = OpenVLAAdapter(model, processor, unnorm_key=UNNORM_KEYS[suite])
    task_suite = benchmark.get_benchmark_dict()[f"libero_{suite}"]()
    rng = np.random.default_rng(seed)
    per_task = []
    for task_id in range(task_suite.n_tasks):
        task = task_suite.get_task(task_id)
        initial_states = task_suite.get_task_init_states(task_id)
        bddl = (
            Path(libero_root.get_libero_path("bddl_files")) / task.problem_folder / task.bddl_file
        )
        env = envs.OffScreenRenderEnv(
            bddl_file_name=str(bddl), camera_heights=resolution, camera_widths=resolution
        )
        env.seed(int(rng.integers(2**31)))
        successes = 0
        for trial in range(trials):
            env.reset()
            obs = env.set_init_state(initial_states[trial % len(initial_states)])
            state = UncertaintyState(adapter.num_action_tokens)  # SCALE state reset per episode
            for t in range(LIBERO_MAX_STEPS[suite] + num_wait_steps):
                if t < num_wait_steps:
                    obs, _, done, _ = env.step([0, 0, 0, 0, 0, 0, -1])
                    continue
                image = np.ascontiguousarray(obs["agentview_image"][::-1, ::-1])  # 180° rotation
                if center_crop:
                    image = _center_crop(image)
                action = _libero_gripper(
                    adapter.predict_action(image, task.language, decoder, state)
                )
                obs, _, done, _ = env.step(action.tolist())
                if done:
                    successes += 1
                    break
        env.close()
        per_task.append(successes / trials)
    return {
        "success_rate": float(np.mean(per_task)),
        "per_task": per_task,
        "episodes": trials * len(per_task),
    }
