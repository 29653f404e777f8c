"""The backbone adapter: capture X^{int}, score, and physically slice Llama/Gemma-style blocks.

EcoVLA (arXiv:2602.00780) prunes the LLM backbone of a VLA policy: in each decoder block the MLP
intermediate channels (W_gate/W_up rows, W_down columns) and the attention heads (W_Q rows, W_O
columns). :class:`BackboneAdapter` holds the model-independent machinery: forward pre-hooks on
``mlp.down_proj`` and ``self_attn.o_proj`` capture X^{int} (§2.1), column norms of W_down and W_O
are precomputed once (§4.3), and a :class:`~icml26.ecovla.pattern.SparsityPattern` is installed
by swapping in smaller contiguous ``nn.Linear`` copies, cached per pattern. A policy implements
three things: its decoder ``layers``, ``visual_features(obs)`` (the never-pruned vision encoder's
tokens, for the trigger) and ``act(obs)``. :class:`LlamaBackboneAdapter` wraps any Hugging Face
model whose decoder layers have that layout (Llama, Gemma, Mistral, Qwen2, OpenVLA's Llama-2).

Deviations: for grouped-query attention the paper gives no rule (spec §2.1); here every KV group
keeps the same number of query heads, round((1 - ratio) · heads per group) (at least one), so
W_K/W_V stay intact and ``num_key_value_groups`` becomes that number; with one head per group
(plain multi-head attention) heads are ranked globally and a removed head takes its K/V rows
with it.
"""

from __future__ import annotations

import abc
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, final

from icml26.core.validation import check_in_interval, check_tensor
from icml26.ecovla.pattern import SparsityPattern, slice_linear
from icml26.ecovla.scoring import n_keep, select_keep, top_k

if TYPE_CHECKING:
    import torch
    from torch import nn

__all__ = [
    "BackboneAdapter",
    "BackboneDims",
    "Capture",
    "LlamaBackboneAdapter",
    "find_decoder_layers",
    "load_vla",
]

CACHE_SIZE = 8  # sliced copies kept per adapter (patterns are reused until the next trigger)
_MLP = ("gate_proj", "up_proj", "down_proj")
_ATTN = ("q_proj", "k_proj", "v_proj", "o_proj")
DTYPES = ("bfloat16", "float16", "float32", "float64")
# decoders with mlp.gate/up/down_proj and self_attn.q/k/v/o_proj (the layout the adapter slices)
LLAMA_STYLE = frozenset({"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "olmo"})


@dataclass(frozen=True)
class BackboneDims:
    """Sizes of a decoder stack: layers, model width, MLP width, heads, KV heads, head size."""

    n_layers: int
    d_model: int
    d_ff: int
    n_heads: int
    n_kv_heads: int
    head_dim: int

    @property
    def heads_per_group(self) -> int:
        """Query heads sharing one K/V head (1 for plain multi-head attention)."""
        return self.n_heads // self.n_kv_heads


@dataclass
class Capture:
    """X^{int} of the last dense forward pass: per layer, the input of W_down and of W_O."""

    mlp: dict[int, torch.Tensor] = field(default_factory=dict)
    attn: dict[int, torch.Tensor] = field(default_factory=dict)


def _is_decoder_layer(module: Any) -> bool:
    mlp, attn = getattr(module, "mlp", None), getattr(module, "self_attn", None)
    return all(hasattr(mlp, n) for n in _MLP) and all(hasattr(attn, n) for n in _ATTN)


def _top_k_rows(scores: torch.Tensor, k: int) -> torch.Tensor:
    """Per row, the sorted indices of the k highest scores (ties: lower index), ``(rows, k)``."""
    import torch

    order = torch.sort(scores, dim=1, descending=True, stable=True).indices[:, :k]
    return torch.sort(order, dim=1).values


def find_decoder_layers(model: nn.Module) -> list[nn.Module]:
    """The longest ``nn.ModuleList`` of Llama-style decoder layers inside ``model``.

    A decoder layer has ``mlp.{gate,up,down}_proj`` and ``self_attn.{q,k,v,o}_proj``.

    Raises
    ------
    TypeError
        If ``model`` is not an ``nn.Module``.
    ValueError
        If no such layer list exists.
    """
    from torch import nn

    if not isinstance(model, nn.Module):
        raise TypeError(
            f"find_decoder_layers: model must be a torch.nn.Module; got {type(model).__name__}."
        )
    best: list[nn.Module] = []
    for module in model.modules():
        longer = isinstance(module, nn.ModuleList) and len(module) > len(best)
        if longer and all(_is_decoder_layer(m) for m in module):
            best = list(module)
    if not best:
        raise ValueError(
            "find_decoder_layers: model must contain an nn.ModuleList of decoder layers with "
            "mlp.gate_proj/up_proj/down_proj and self_attn.q_proj/k_proj/v_proj/o_proj; none found."
        )
    return best


class BackboneAdapter(abc.ABC):
    """What EcoVLA needs from a policy, and the shared capture/scoring/slicing machinery.

    Subclasses implement ``layers``, ``visual_features`` and ``act``; everything else is
    concrete. Install patterns with :meth:`install` (``None`` restores the dense weights).
    """

    @property
    @abc.abstractmethod
    def layers(self) -> Sequence[nn.Module]:
        """The decoder layers, each with ``mlp.*_proj`` and ``self_attn.*_proj`` linears."""

    @abc.abstractmethod
    def visual_features(self, obs: Mapping[str, Any]) -> torch.Tensor:
        """Vision-encoder tokens of one observation, shape ``(N, D)`` (never pruned)."""

    @abc.abstractmethod
    def act(self, obs: Mapping[str, Any], *, features: torch.Tensor | None = None) -> Any:
        """The policy output for one observation with the currently installed weights."""

    # --- shared machinery (never overridden) ---------------------------------------------

    def _state(self) -> dict[str, Any]:
        state = self.__dict__.get("_ecovla_state")
        if state is None:
            originals = []
            for layer in self.layers:
                mods = {n: getattr(layer.mlp, n) for n in _MLP}
                mods |= {n: getattr(layer.self_attn, n) for n in _ATTN}
                mods["groups"] = int(getattr(layer.self_attn, "num_key_value_groups", 1))
                originals.append(mods)
            state = {
                "originals": originals,
                "cache": OrderedDict(),
                "lock": threading.Lock(),
                "installed": None,
                "norms": None,
                "dims": None,
            }
            self.__dict__["_ecovla_state"] = state
        return state

    def dims(self) -> BackboneDims:
        """Sizes of the decoder stack, read from the dense weights."""
        state = self._state()
        if state["dims"] is None:
            first = state["originals"][0]
            attn = self.layers[0].self_attn
            q, k = first["q_proj"], first["k_proj"]
            if not isinstance(getattr(attn, "head_dim", None), int):
                raise ValueError("the adapter's layers must have self_attn.head_dim (an int).")
            head_dim = attn.head_dim
            state["dims"] = BackboneDims(
                n_layers=len(self.layers),
                d_model=q.in_features,
                d_ff=first["gate_proj"].out_features,
                n_heads=q.out_features // head_dim,
                n_kv_heads=k.out_features // head_dim,
                head_dim=head_dim,
            )
        return state["dims"]

    def final_weights(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """(W_down, W_O) of every layer, dense, as stored by ``nn.Linear`` (out, in)."""
        return [(o["down_proj"].weight, o["o_proj"].weight) for o in self._state()["originals"]]

    def final_weight_norms(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Column norms ||W_down[:, k]|| (layers, d_ff) and ||W_O[:, k]|| (layers, H·hd), cached."""
        import torch

        state = self._state()
        if state["norms"] is None:
            pairs = self.final_weights()
            mlp = torch.stack([w.detach().double().norm(dim=0) for w, _ in pairs])
            attn = torch.stack([w.detach().double().norm(dim=0) for _, w in pairs])
            state["norms"] = (mlp, attn)
        return state["norms"]

    @contextmanager
    def capture(self) -> Iterator[Capture]:
        """Record X^{int} (inputs of the dense W_down and W_O) of the block's forward passes."""
        captured = Capture()
        handles = []
        for i, mods in enumerate(self._state()["originals"]):

            def hook_mlp(module: Any, args: tuple, i: int = i) -> None:
                captured.mlp[i] = args[0].detach()

            def hook_attn(module: Any, args: tuple, i: int = i) -> None:
                captured.attn[i] = args[0].detach()

            handles.append(mods["down_proj"].register_forward_pre_hook(hook_mlp))
            handles.append(mods["o_proj"].register_forward_pre_hook(hook_attn))
        try:
            yield captured
        finally:
            for handle in handles:
                handle.remove()

    @contextmanager
    def masked(self, pattern: SparsityPattern) -> Iterator[None]:
        """Dense weights with the pruned channels/heads zeroed before W_down/W_O (masks only).

        The same function as :meth:`install` of ``pattern`` but without any saving: the
        anchor showing that masks alone give no speed-up.
        """
        import torch

        self._check_pattern(pattern)
        self.install(None)
        d = self.dims()
        handles = []
        for i, layer in enumerate(self.layers):
            dtype = layer.mlp.down_proj.weight.dtype
            device = layer.mlp.down_proj.weight.device
            mlp_mask = torch.zeros(d.d_ff, dtype=dtype, device=device)
            mlp_mask[pattern.mlp[i]] = 1.0
            head_mask = torch.zeros(d.n_heads, d.head_dim, dtype=dtype, device=device)
            head_mask[pattern.heads[i]] = 1.0
            for module, mask in (
                (layer.mlp.down_proj, mlp_mask),
                (layer.self_attn.o_proj, head_mask.reshape(-1)),
            ):

                def zero(module: Any, args: tuple, mask: torch.Tensor = mask) -> tuple:
                    return (args[0] * mask,)

                handles.append(module.register_forward_pre_hook(zero))
        try:
            yield
        finally:
            for handle in handles:
                handle.remove()

    def dense_pattern(self) -> SparsityPattern:
        """The pattern that keeps everything (ratio 0)."""
        import torch

        d = self.dims()
        return SparsityPattern(
            tuple(torch.arange(d.d_ff) for _ in range(d.n_layers)),
            tuple(torch.arange(d.n_heads) for _ in range(d.n_layers)),
        )

    def pattern_from_energy(
        self, mlp_energy: torch.Tensor, attn_energy: torch.Tensor, ratio: float
    ) -> SparsityPattern:
        """Top-(1 - ratio) channels and heads per layer from fused energies (Eq. 11 + top-k).

        Parameters
        ----------
        mlp_energy
            Ê of the W_down inputs, shape ``(layers, d_ff)``.
        attn_energy
            Ê of the W_O inputs, shape ``(layers, n_heads · head_dim)``.
        ratio
            Pruning ratio in [0, 1), the same for MLP channels and heads in every layer.
        """
        import torch

        owner = "pattern_from_energy"
        d = self.dims()
        ratio = check_in_interval("ratio", ratio, low=0.0, high=1.0, closed="left", owner=owner)
        mlp_energy = check_tensor(
            "mlp_energy", mlp_energy, shape=(d.n_layers, d.d_ff), finite=True, owner=owner
        )
        attn_energy = check_tensor(
            "attn_energy",
            attn_energy,
            owner=owner,
            finite=True,
            shape=(d.n_layers, d.n_heads * d.head_dim),
        )
        if bool((mlp_energy < 0).any()) or bool((attn_energy < 0).any()):
            raise ValueError(f"{owner}: mlp_energy and attn_energy must be >= 0 (sums of squares).")
        # Eq. 11 for all layers in one batched call, with the precomputed column norms (§4.3)
        mlp_norms, attn_norms = self.final_weight_norms()
        mlp_scores = mlp_norms * mlp_energy.detach().double().to(mlp_norms.device).sqrt()
        channel_scores = attn_norms * attn_energy.detach().double().to(attn_norms.device).sqrt()
        head_scores = channel_scores.view(d.n_layers, d.n_heads, d.head_dim).sum(dim=2)
        mlp_keep = _top_k_rows(mlp_scores, n_keep(d.d_ff, ratio))
        r = d.heads_per_group
        if r == 1:
            head_keep = _top_k_rows(head_scores, n_keep(d.n_heads, ratio))
        else:  # the same count in every KV group keeps the GQA layout valid
            grouped = head_scores.view(d.n_layers * d.n_kv_heads, r)
            kept = _top_k_rows(grouped, n_keep(r, ratio)).view(d.n_layers, d.n_kv_heads, -1)
            offsets = torch.arange(d.n_kv_heads, device=kept.device)[None, :, None] * r
            head_keep = (kept + offsets).view(d.n_layers, -1)
        return SparsityPattern(tuple(mlp_keep.cpu()), tuple(head_keep.cpu()))

    def _select_heads(self, head_scores: torch.Tensor, ratio: float) -> torch.Tensor:
        """Kept heads of one layer from its head scores (GQA: the same count per KV group)."""
        import torch

        d = self.dims()
        r = d.heads_per_group
        if r == 1:
            return select_keep(head_scores, ratio)
        k = n_keep(r, ratio)
        kept = [top_k(head_scores[g * r : (g + 1) * r], k) + g * r for g in range(d.n_kv_heads)]
        return torch.cat(kept)

    def _check_pattern(self, pattern: SparsityPattern) -> None:
        d = self.dims()
        if not isinstance(pattern, SparsityPattern):
            raise TypeError(
                f"pattern must be a SparsityPattern or None; got {type(pattern).__name__}."
            )
        if pattern.n_layers != d.n_layers:
            raise ValueError(f"pattern must cover the {d.n_layers} layers; got {pattern.n_layers}.")
        for i, (m, h) in enumerate(zip(pattern.mlp, pattern.heads, strict=True)):
            if int(m.max()) >= d.d_ff or int(h.max()) >= d.n_heads:
                raise ValueError(
                    f"pattern layer {i}: indices must be below d_ff={d.d_ff} and "
                    f"n_heads={d.n_heads}."
                )
            if d.heads_per_group > 1:
                counts = (h // d.heads_per_group).bincount(minlength=d.n_kv_heads)
                if not bool((counts == counts[0]).all()) or int(counts[0]) == 0:
                    raise ValueError(
                        f"pattern layer {i}: with grouped-query attention every KV "
                        "group must keep the same number (>= 1) of heads."
                    )

    def sliced(self, pattern: SparsityPattern) -> list[dict[str, Any]]:
        """The physically sliced modules of ``pattern`` (built once, then cached).

        Safe to call from a second thread: only the dense weights are read.
        """
        import torch

        self._check_pattern(pattern)
        state = self._state()
        with state["lock"]:
            if pattern.key in state["cache"]:
                state["cache"].move_to_end(pattern.key)
                return state["cache"][pattern.key]
        d = self.dims()
        hd, r = d.head_dim, d.heads_per_group
        built = []
        for o, keep, heads in zip(state["originals"], pattern.mlp, pattern.heads, strict=True):
            q_rows = (heads[:, None] * hd + torch.arange(hd)).reshape(-1)  # (kept heads · hd,)
            mods = {
                "gate_proj": slice_linear(o["gate_proj"], rows=keep),
                "up_proj": slice_linear(o["up_proj"], rows=keep),
                "down_proj": slice_linear(o["down_proj"], cols=keep),
                "q_proj": slice_linear(o["q_proj"], rows=q_rows),
                "o_proj": slice_linear(o["o_proj"], cols=q_rows),
            }
            if r == 1:  # MHA: a removed head removes its own K/V head
                mods["k_proj"] = slice_linear(o["k_proj"], rows=q_rows)
                mods["v_proj"] = slice_linear(o["v_proj"], rows=q_rows)
                mods["groups"] = 1
            else:
                mods["k_proj"], mods["v_proj"] = o["k_proj"], o["v_proj"]
                mods["groups"] = len(heads) // d.n_kv_heads
            built.append(mods)
        with state["lock"]:
            state["cache"][pattern.key] = built
            while len(state["cache"]) > CACHE_SIZE:
                state["cache"].popitem(last=False)
        return built

    def install(self, pattern: SparsityPattern | None) -> None:
        """Swap the sliced weights of ``pattern`` into the layers (``None``: the dense ones)."""
        state = self._state()
        if pattern is not None and not isinstance(pattern, SparsityPattern):
            raise TypeError(
                f"pattern must be a SparsityPattern or None; got {type(pattern).__name__}."
            )
        key = None if pattern is None else pattern.key
        if key == state["installed"]:
            return
        modules = state["originals"] if pattern is None else self.sliced(pattern)
        for layer, mods in zip(self.layers, modules, strict=True):
            for name in _MLP:
                setattr(layer.mlp, name, mods[name])
            for name in _ATTN:
                setattr(layer.self_attn, name, mods[name])
            if hasattr(layer.self_attn, "num_key_value_groups"):
                layer.self_attn.num_key_value_groups = mods["groups"]
        state["installed"] = key

    @property
    def installed_key(self) -> str | None:
        """Key of the installed pattern, ``None`` when the dense weights are installed."""
        return self._state()["installed"]


@final
class LlamaBackboneAdapter(BackboneAdapter):
    """Adapter for a Hugging Face model with Llama-style decoder layers (the real-scale path).

    ``obs`` is the model's keyword inputs (``input_ids``, optionally ``attention_mask`` and
    ``pixel_values``). ``visual_features`` returns the vision backbone's patch features when the
    model has one (OpenVLA's ``vision_backbone``) and the input embeddings otherwise; ``act``
    returns ``predict_action(**obs)`` when the model has it (OpenVLA) and the next-token logits
    otherwise.

    Parameters
    ----------
    model
        The Hugging Face model (``PreTrainedModel``).

    Examples
    --------
    >>> import torch
    >>> from transformers import LlamaConfig, LlamaForCausalLM
    >>> cfg = LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32,
    ...                   num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4)
    >>> adapter = LlamaBackboneAdapter(LlamaForCausalLM(cfg))
    >>> adapter.dims().d_ff, adapter.dims().n_heads
    (32, 4)
    """

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self._layers = find_decoder_layers(model)

    @property
    def layers(self) -> Sequence[nn.Module]:
        """The decoder layers found in the model."""
        return self._layers

    def visual_features(self, obs: Mapping[str, Any]) -> torch.Tensor:
        """Vision patch features (or input embeddings) of one observation, shape ``(N, D)``."""
        import torch

        obs = _check_obs(obs, "LlamaBackboneAdapter.visual_features")
        with torch.no_grad():
            vision = getattr(self.model, "vision_backbone", None)
            if vision is not None and "pixel_values" in obs:
                return vision(obs["pixel_values"])[0].float()
            return self.model.get_input_embeddings()(obs["input_ids"])[0].float()

    def act(self, obs: Mapping[str, Any], *, features: torch.Tensor | None = None) -> Any:
        """``predict_action(**obs)`` if the model has it, else the last position's logits."""
        import torch

        obs = _check_obs(obs, "LlamaBackboneAdapter.act")
        with torch.no_grad():
            if hasattr(self.model, "predict_action"):
                return self.model.predict_action(**obs)
            return self.model(**obs).logits[0, -1]


def _check_obs(obs: Any, owner: str) -> Mapping[str, Any]:
    import torch

    if not isinstance(obs, Mapping) or not isinstance(obs.get("input_ids"), torch.Tensor):
        raise TypeError(
            f"{owner}: obs must be a mapping with an 'input_ids' tensor; got {type(obs).__name__}."
        )
    return obs


def load_vla(
    name_or_dir: str,
    *,
    dtype: str = "bfloat16",
    trust_remote_code: bool = False,
    revision: str | None = None,
) -> LlamaBackboneAdapter:
    """Load a VLA (or its LLM backbone) with ``transformers`` and wrap it in an adapter.

    Vision-language checkpoints (OpenVLA-OFT: ``"moojink/openvla-7b-oft-finetuned-libero-spatial"``,
    which ships its own modelling code: pass ``trust_remote_code=True`` and a ``revision``) load
    through ``AutoModelForImageTextToText`` (the successor of ``AutoModelForVision2Seq``); a plain
    causal LM (architecture ``*ForCausalLM``) through ``AutoModelForCausalLM``. The config is
    read first and its architecture checked (a Llama-style decoder is needed) before any weights
    are built. Nothing is downloaded unless ``name_or_dir`` is a hub id and the hub is reachable.

    Parameters
    ----------
    name_or_dir
        Hub id or local folder.
    dtype
        ``"bfloat16"`` (paper), ``"float16"``, ``"float32"`` or ``"float64"`` (exact checks).
    trust_remote_code
        Run the checkpoint's own Python code (opt-in, default ``False``: a checkpoint then loads
        only through the classes ``transformers`` ships). Only for repositories you trust, and
        with ``revision`` pinned for a hub id.
    revision
        A hub commit hash (or tag/branch) to load; required with ``trust_remote_code=True`` for
        a hub id, so the code that runs cannot change under you.

    Raises
    ------
    ValueError
        ``trust_remote_code=True`` for a hub id without ``revision``; a config whose model type
        is not a known decoder with a Llama-style layout and no remote code allowed.
    """
    from pathlib import Path

    from icml26.core.imports import require
    from icml26.core.validation import check_one_of

    owner = "load_vla"
    transformers = require("transformers", "ecovla", owner=owner)
    import torch

    if not isinstance(name_or_dir, str) or not name_or_dir:
        raise TypeError(f"{owner}: name_or_dir must be a non-empty str; got {name_or_dir!r}.")
    dtype = check_one_of("dtype", dtype, DTYPES, owner=owner)
    if not isinstance(trust_remote_code, bool):
        raise TypeError(
            f"{owner}: trust_remote_code must be a bool; got {type(trust_remote_code).__name__}."
        )
    if revision is not None and (not isinstance(revision, str) or not revision.strip()):
        raise TypeError(f"{owner}: revision must be a non-empty str or None; got {revision!r}.")
    if trust_remote_code and revision is None and not Path(name_or_dir).is_dir():
        raise ValueError(
            f"{owner}: trust_remote_code=True runs the repository's code; pin it with "
            "revision=<commit hash> (or load a local folder you have checked)."
        )
    options = {"trust_remote_code": trust_remote_code, "revision": revision}
    config = transformers.AutoConfig.from_pretrained(name_or_dir, **options)
    causal = any(a.endswith("ForCausalLM") for a in (config.architectures or []))
    model_type = getattr(config, "model_type", None)
    text = getattr(config, "text_config", None) or getattr(config, "text_model", None)
    decoder_type = getattr(text, "model_type", model_type)
    if not trust_remote_code and decoder_type not in LLAMA_STYLE:
        raise ValueError(
            f"{owner}: {name_or_dir} is a {model_type!r} model (decoder {decoder_type!r}); "
            f"expected a Llama-style decoder ({', '.join(sorted(LLAMA_STYLE))})."
        )
    auto = transformers.AutoModelForCausalLM if causal else transformers.AutoModelForImageTextToText
    model = auto.from_pretrained(name_or_dir, dtype=getattr(torch, dtype), **options)
    return LlamaBackboneAdapter(model.eval())
