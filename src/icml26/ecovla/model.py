"""TinyVLA: a small vision-language-action policy on Hugging Face Llama decoder layers (spec §5).

A convolutional encoder (CoordConv input, FiLM-conditioned on the instruction as in RT-1) turns the
64 x 64 image into a keypoint token (spatial softmax, Levine et al. 2016) and 64 patch tokens (never
pruned); the instruction (object id, goal id) and the proprioception (gripper x, y, grip) are one
token each; four learned action queries follow (issue 42: no shortcut from the instruction,
proprio or keypoint embeddings into the queries, so the backbone must carry them). The sequence
runs through ``transformers`` Llama decoder layers (pre-norm, RoPE, SwiGLU MLP with gate/up/down,
q/k/v/o attention: the layout of
OpenVLA's Llama-2 backbone), and an MLP on the pooled action-query tokens regresses an action
chunk of 4 steps x (dx, dy, grip) (OpenVLA-OFT style parallel decoding: one backbone pass per
chunk). FastV-style token pruning can drop visual tokens after a chosen layer.

Deviations: a stand-in for the paper's 7B backbones; sizes follow the spec (d = 128, 6 blocks,
4 heads, d_ff = 512 in ``full``). FiLM, the keypoint token and an auxiliary localisation head
(``locate``: the instructed object's and pad's positions, used only as a training loss) are ours:
without them behaviour cloning did not localise the target within the CPU budget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, final

import numpy as np
import torch
from torch import nn

from icml26.core.validation import Seed, check_in_interval, check_positive_int, check_tensor
from icml26.core.weights import seeded_default_init
from icml26.ecovla._inputs import check_seed
from icml26.ecovla.adapter import BackboneAdapter
from icml26.ecovla.tokens import fastv_token_prune

__all__ = ["TinyVLA", "TinyVLAConfig"]

MAX_WIDTH = 4096  # widths beyond this are not a tiny stand-in


@dataclass(frozen=True)
class TinyVLAConfig:
    """Sizes of :class:`TinyVLA` (defaults: the spec's full-size stand-in).

    Parameters
    ----------
    d_model, n_layers, n_heads, n_kv_heads, d_ff
        Backbone width, depth, query heads, KV heads (GQA when fewer than heads), MLP width.
    image_size, patch
        Image side and patch side in pixels (image_size / patch squared visual tokens).
    chunk
        Action-chunk length (steps per backbone pass).
    conv_channels
        Channels of the encoder's first convolution.
    n_tasks
        Task token (issue 42's multi-task pre-training): ``0`` (the default, the shipped
        single-task policies) has none; ``k > 0`` adds a learned embedding of the task (an
        index into ``TASKS``: 0 pick-place, 1 touch, 2 push) to the instruction token, so the
        instruction reads "task, object, pad" and the sequence length is unchanged.
    """

    d_model: int = 128
    n_layers: int = 6
    n_heads: int = 4
    n_kv_heads: int = 4
    d_ff: int = 512
    image_size: int = 64
    patch: int = 8
    chunk: int = 4
    conv_channels: int = 32
    n_tasks: int = 0

    def __post_init__(self) -> None:
        owner = "TinyVLAConfig"
        for name in ("d_model", "d_ff", "conv_channels"):
            check_positive_int(name, getattr(self, name), maximum=MAX_WIDTH, owner=owner)
        for name in ("n_layers", "n_heads", "n_kv_heads", "chunk"):
            check_positive_int(name, getattr(self, name), maximum=64, owner=owner)
        check_positive_int("image_size", self.image_size, maximum=256, owner=owner)
        check_positive_int("n_tasks", self.n_tasks, minimum=0, maximum=64, owner=owner)
        check_positive_int("patch", self.patch, maximum=self.image_size, owner=owner)
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(
                f"{owner}: d_model must be n_heads times an even head size; got "
                f"d_model={self.d_model}, n_heads={self.n_heads}."
            )
        if self.n_heads % self.n_kv_heads:
            raise ValueError(
                f"{owner}: n_kv_heads must divide n_heads; got "
                f"{self.n_kv_heads} and {self.n_heads}."
            )
        if self.patch % 4:
            raise ValueError(f"{owner}: patch must be a multiple of 4; got {self.patch}.")
        if self.image_size % self.patch:
            raise ValueError(
                f"{owner}: patch must divide image_size; got {self.patch} and {self.image_size}."
            )

    @property
    def n_visual(self) -> int:
        """Number of visual tokens."""
        return (self.image_size // self.patch) ** 2

    @property
    def n_tokens(self) -> int:
        """Sequence length: instruction, proprio, keypoints (1 each) + patches + action queries."""
        return 3 + self.n_visual + self.chunk


@final
class TinyVLA(nn.Module, BackboneAdapter):
    """A tiny VLA policy whose backbone is a stack of HF ``LlamaDecoderLayer`` s.

    Parameters
    ----------
    config
        Sizes (:class:`TinyVLAConfig`).
    seed
        Seed of the parameter initialisation.

    Examples
    --------
    >>> from icml26.ecovla import Shift2DPickPlaceEnv
    >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64), seed=0)
    >>> obs, _ = Shift2DPickPlaceEnv().reset(seed=0)
    >>> model.act(obs).shape  # (chunk, (dx, dy, grip))
    (4, 3)
    """

    VISUAL_START = 3  # tokens before the patch tokens: instruction, proprio, keypoints

    def __init__(self, config: TinyVLAConfig | None = None, *, seed: Seed = 0) -> None:
        super().__init__()
        from transformers import LlamaConfig, LlamaModel

        config = TinyVLAConfig() if config is None else config
        if not isinstance(config, TinyVLAConfig):
            raise TypeError(
                f"TinyVLA: config must be a TinyVLAConfig; got {type(config).__name__}."
            )
        self.config = config
        c = config
        llama = LlamaConfig(
            vocab_size=1,
            bos_token_id=None,
            eos_token_id=None,
            hidden_size=c.d_model,
            intermediate_size=c.d_ff,
            num_hidden_layers=c.n_layers,
            num_attention_heads=c.n_heads,
            num_key_value_heads=c.n_kv_heads,
            max_position_embeddings=max(64, c.n_tokens),
            attn_implementation="eager",  # FastV reads the last row of the attention map
        )
        with seeded_default_init(check_seed(seed, "TinyVLA")):
            # two non-overlapping strided convolutions (cheap on CPU): patch = sub-patch x 2
            # RGB + (x, y) coordinate maps (CoordConv): sub-patch positions are linear features
            self.conv = nn.Conv2d(5, c.conv_channels, 4, stride=4)
            self.keypoint_scale = nn.Parameter(torch.tensor(10.0))  # spatial-softmax inverse temp.
            self.keypoints = nn.Linear(2 * c.conv_channels, c.d_model)
            self.patchify = nn.Conv2d(c.conv_channels, c.d_model, c.patch // 4, stride=c.patch // 4)
            self.visual_pos = nn.Parameter(torch.randn(c.n_visual, c.d_model) * 0.02)
            # FiLM of the encoder by the instruction (as RT-1's image tokenizer): (γ, β) per channel
            self.film_object = nn.Embedding(3, 2 * c.conv_channels)
            self.film_goal = nn.Embedding(2, 2 * c.conv_channels)
            self.object_emb = nn.Embedding(3, c.d_model)
            self.goal_emb = nn.Embedding(2, c.d_model)
            self.proprio = nn.Linear(3, c.d_model)
            self.queries = nn.Parameter(torch.randn(c.chunk, c.d_model) * 0.02)
            self.backbone = LlamaModel(llama)
            # auxiliary, on the keypoint token: the instructed object's and pad's (x, y)
            self.locate = nn.Linear(c.d_model, 4)
            self.head = nn.Sequential(
                nn.Linear(c.d_model, c.d_model), nn.GELU(), nn.Linear(c.d_model, c.chunk * 3)
            )
            # drawn last, and only with a task token: n_tasks = 0 draws what the code before did
            self.task_emb = nn.Embedding(c.n_tasks, c.d_model) if c.n_tasks else None
        nn.init.zeros_(self.film_object.weight)  # FiLM starts as the identity
        nn.init.zeros_(self.film_goal.weight)
        self.backbone.embed_tokens = None  # inputs are embeddings; no vocabulary
        self.token_keep = 1.0
        self.token_layer = 2

    @property
    def layers(self) -> Sequence[nn.Module]:
        """The Llama decoder layers (the prunable backbone)."""
        return self.backbone.layers

    def set_token_pruning(self, keep_ratio: float = 1.0, start_layer: int = 2) -> None:
        """FastV-style: keep ``keep_ratio`` of the visual tokens from layer ``start_layer`` on.

        Tokens are ranked by the attention the last token pays them in layer start_layer - 1;
        ``keep_ratio = 1`` turns token pruning off.
        """
        owner = "TinyVLA.set_token_pruning"
        self.token_keep = check_in_interval(
            "keep_ratio", keep_ratio, low=0.0, high=1.0, closed="right", owner=owner
        )
        self.token_layer = check_positive_int(
            "start_layer", start_layer, maximum=self.config.n_layers - 1, owner=owner
        )

    # --- encoders ---------------------------------------------------------------------------

    def encode_images(self, images: torch.Tensor, instruction: torch.Tensor) -> torch.Tensor:
        """Vision-encoder tokens ``(B, 1 + N, D)`` from uint8 images ``(B, H, W, 3)``.

        Token 0 is the keypoint token (a spatial softmax over the FiLM-conditioned feature map,
        Levine et al. 2016), tokens 1..N the patch tokens (before position embeddings). The
        feature map's channels are FiLM-modulated by the instruction ``(B, 2)``.
        """
        images, instruction = self._check_images(images, instruction)
        dtype = self.visual_pos.dtype
        x = images.permute(0, 3, 1, 2).to(dtype) / 255.0 - 0.5  # (B, 3, H, W)
        n = x.shape[-1]
        ramp = torch.linspace(-0.5, 0.5, n, dtype=dtype, device=x.device)
        coords = torch.stack([ramp.expand(n, n), ramp[:, None].expand(n, n)])  # (2, H, W): x, y
        x = torch.cat([x, coords.expand(x.shape[0], -1, -1, -1)], dim=1)  # (B, 5, H, W)
        film = self.film_object(instruction[:, 0]) + self.film_goal(instruction[:, 1])  # (B, 2C)
        gamma, beta = film[:, :, None, None].chunk(2, dim=1)  # (B, C, 1, 1) each
        x = nn.functional.gelu(self.conv(x) * (1.0 + gamma) + beta)  # (B, C, H/4, W/4)
        m = x.shape[-1]
        attention = torch.softmax(x.flatten(2) * self.keypoint_scale, dim=-1)  # (B, C, m·m)
        grid = torch.linspace(0.0, 1.0, m, dtype=dtype, device=x.device)
        kx = (attention.view(*attention.shape[:2], m, m) * grid).sum(dim=(2, 3))  # (B, C)
        ky = (attention.view(*attention.shape[:2], m, m) * grid[:, None]).sum(dim=(2, 3))
        keypoints = self.keypoints(torch.cat([kx, ky], dim=1))  # (B, D)
        patches = self.patchify(x).flatten(2).transpose(1, 2)  # (B, N, D)
        return torch.cat([keypoints[:, None], patches], dim=1)  # (B, 1 + N, D)

    def forward(
        self,
        images: torch.Tensor,
        instruction: torch.Tensor,
        proprio: torch.Tensor,
        visual: torch.Tensor | None = None,
        return_positions: bool = False,
        task: torch.Tensor | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Action chunks ``(B, chunk, 3)`` from a batch of observations.

        With ``return_positions`` also the encoder's auxiliary localisation ``(B, 4)`` (read
        from the keypoint token; a training aid). ``task`` ``(B,)``: task indices for a model
        with a task token (``None``: pick-place, index 0, the evaluated task; a model without
        a task token accepts only ``None`` or pick-place).
        """
        c = self.config
        images, instruction = self._check_images(images, instruction)
        batch, owner = images.shape[0], "TinyVLA"
        proprio = check_tensor("proprio", proprio, shape=(batch, 3), finite=True, owner=owner)
        if visual is not None:
            shape = (batch, 1 + c.n_visual, c.d_model)
            check_tensor("visual", visual, shape=shape, finite=True, owner=owner)
        visual = self.encode_images(images, instruction) if visual is None else visual
        instr = self.object_emb(instruction[:, 0]) + self.goal_emb(instruction[:, 1])  # (B, D)
        task = self._check_task(task, batch)
        if self.task_emb is not None:
            instr = instr + self.task_emb(task)
        state = self.proprio(proprio.to(visual.dtype))  # (B, D)
        # the action queries are learned tokens only (no shortcut from the task, gripper or
        # keypoint embeddings): what they carry to the head, the backbone's attention brings
        queries = self.queries.expand(batch, -1, -1)  # (B, chunk, D)
        tokens = torch.cat(
            [
                instr[:, None],
                state[:, None],
                visual[:, :1],  # keypoint token
                visual[:, 1:] + self.visual_pos,  # patch tokens
                queries,
            ],
            dim=1,
        )  # (B, S, D)
        h = self._backbone(tokens)
        pooled = h[:, -c.chunk :].mean(dim=1)  # (B, D)
        chunk = self.head(pooled).view(-1, c.chunk, 3)
        return (chunk, self.locate(visual[:, 0])) if return_positions else chunk

    def _check_images(self, images: Any, instruction: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Shapes, dtypes and ids of an image batch and its instructions, checked before compute."""
        n, owner = self.config.image_size, "TinyVLA"
        if not isinstance(images, torch.Tensor) or images.dtype != torch.uint8:
            raise TypeError(f"{owner}: images must be a uint8 tensor (B, {n}, {n}, 3).")
        if images.ndim != 4 or tuple(images.shape[1:]) != (n, n, 3) or images.shape[0] == 0:
            raise ValueError(
                f"{owner}: images must have shape (B >= 1, {n}, {n}, 3); got {tuple(images.shape)}."
            )
        if not isinstance(instruction, torch.Tensor) or instruction.is_floating_point():
            raise TypeError(f"{owner}: instruction must be an integer tensor (B, 2).")
        if instruction.shape != (images.shape[0], 2):
            raise ValueError(
                f"{owner}: instruction must have shape ({images.shape[0]}, 2); got "
                f"{tuple(instruction.shape)}."
            )
        objects, goals = instruction[:, 0], instruction[:, 1]
        if not bool(((objects >= 0) & (objects < 3) & (goals >= 0) & (goals < 2)).all()):
            raise ValueError(
                f"{owner}: instruction must hold object ids in 0..2, goal ids in 0..1."
            )
        return images, instruction.long()

    def _check_task(self, task: Any, batch: int) -> torch.Tensor:
        """Task indices ``(batch,)`` (pick-place when ``None``), checked against ``n_tasks``."""
        device = self.visual_pos.device
        if task is None:
            return torch.zeros(batch, dtype=torch.long, device=device)
        owner, n = "TinyVLA", max(1, self.config.n_tasks)
        if not isinstance(task, torch.Tensor) or task.is_floating_point():
            raise TypeError(f"{owner}: task must be an integer tensor ({batch},) or None.")
        if tuple(task.shape) != (batch,):
            raise ValueError(f"{owner}: task must have shape ({batch},); got {tuple(task.shape)}.")
        if not bool(((task >= 0) & (task < n)).all()):
            if self.config.n_tasks == 0:
                raise ValueError(
                    f"{owner}: this model has no task token (TinyVLAConfig.n_tasks = 0): task "
                    "must be None or pick-place (0); train on several tasks with n_tasks = 3."
                )
            raise ValueError(f"{owner}: task must hold indices in 0..{n - 1}.")
        return task.long().to(device)

    def _backbone(self, h: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(h.shape[1], device=h.device)
        mask = _causal_mask(h.shape[1], h)
        pe = self.backbone.rotary_emb(h, position_ids=positions[None])
        last_attention: list[torch.Tensor] = []
        handle = None
        if self.token_keep < 1.0:

            def grab(module: Any, args: Any, output: Any) -> None:
                last_attention.append(output[1][:, :, -1].mean(dim=1))  # (B, S)

            handle = self.layers[self.token_layer - 1].self_attn.register_forward_hook(grab)
        try:
            for i, layer in enumerate(self.layers):
                if handle is not None and i == self.token_layer:
                    # each row (episode) keeps the tokens its own last token attends to
                    h, kept = fastv_token_prune(
                        h,
                        last_attention[0],
                        self.token_keep,
                        self.VISUAL_START,
                        self.config.n_visual,
                        per_row=True,
                    )
                    positions = kept.to(h.device)  # (B, S')
                    mask = _causal_mask(h.shape[1], h)
                    pe = self.backbone.rotary_emb(h, position_ids=positions)
                ids = positions if positions.ndim == 2 else positions[None]
                h = layer(h, attention_mask=mask, position_ids=ids, position_embeddings=pe)
        finally:
            if handle is not None:
                handle.remove()
        return self.backbone.norm(h)

    def encoder_parameters(self) -> list[nn.Parameter]:
        """Parameters of the vision encoder and its localisation head (never pruned)."""
        modules = (
            self.conv,
            self.film_object,
            self.film_goal,
            self.keypoints,
            self.patchify,
            self.locate,
        )
        return [self.keypoint_scale, *(p for m in modules for p in m.parameters())]

    # --- BackboneAdapter --------------------------------------------------------------------

    def visual_features(self, obs: Mapping[str, Any]) -> torch.Tensor:
        """The encoder's visual tokens of one observation, ``(N, D)``."""
        device = self.visual_pos.device
        images, instruction, _ = (t.to(device) for t in _batch(obs, self.config))
        with torch.no_grad():
            return self.encode_images(images, instruction)[0]

    def act(self, obs: Mapping[str, Any], *, features: torch.Tensor | None = None) -> np.ndarray:
        """The action chunk ``(chunk, 3)`` for one observation (switches to eval mode).

        ``features`` (from :meth:`visual_features`) avoids encoding the image twice.
        """
        device = self.visual_pos.device
        images, instruction, proprio = (t.to(device) for t in _batch(obs, self.config))
        visual = None if features is None else features[None]
        if self.training:
            self.eval()
        with torch.no_grad():
            out = self(images, instruction, proprio, visual=visual)[0]
        return out.cpu().numpy().astype(np.float32)

    def encode_observations(self, observations: Sequence[Mapping[str, Any]]) -> torch.Tensor:
        """The encoder's visual tokens of many observations in one pass, ``(B, 1 + N, D)``."""
        images, instruction, _ = _stack(observations, self.config, self.visual_pos.device)
        with torch.no_grad():
            return self.encode_images(images, instruction)

    def act_rows(
        self,
        observations: Sequence[Mapping[str, Any]],
        features: torch.Tensor,
        masks: tuple[torch.Tensor, torch.Tensor],
        capture: bool = False,
    ) -> tuple[np.ndarray, Any]:
        """One batched pass in which every row (episode) has its own channel and head masks.

        Parameters
        ----------
        observations
            B observations.
        features
            Their encoder tokens, ``(B, 1 + N, D)`` (:meth:`encode_observations`).
        masks
            ``(B, layers, d_ff)`` and ``(B, layers, n_heads)``: 1 keeps an MLP channel / a head
            of that row, 0 zeroes it before W_down / W_O (the same function as slicing, which
            the tests check; :meth:`masks_of` builds them from patterns).
        capture
            Also return the dense X^{int} of every row (a :class:`~icml26.ecovla.adapter.Capture`
            of ``(B, S, C)`` tensors; rows with masks see their masked inputs).

        Returns
        -------
        (numpy.ndarray, Capture or None)
            Action chunks ``(B, chunk, 3)`` and the capture.
        """
        d = self.dims()
        if not isinstance(masks, tuple | list) or len(masks) != 2:
            raise TypeError(
                "TinyVLA.act_rows: masks must be a pair (mlp mask, head mask) of tensors "
                "(TinyVLA.masks_of builds it)."
            )
        mlp_mask, head_mask = masks
        images, instruction, proprio = _stack(observations, self.config, self.visual_pos.device)
        rows = len(observations)
        check_tensor("features", features, shape=(rows, 1 + self.config.n_visual, d.d_model))
        check_tensor("masks[0]", mlp_mask, shape=(rows, d.n_layers, d.d_ff), owner="act_rows")
        check_tensor("masks[1]", head_mask, shape=(rows, d.n_layers, d.n_heads), owner="act_rows")
        self.install(None)
        if self.training:
            self.eval()
        dtype = self.visual_pos.dtype
        head_channels = head_mask.to(dtype).repeat_interleave(d.head_dim, dim=2)
        handles = []
        for i, layer in enumerate(self.layers):
            for module, mask in (
                (layer.mlp.down_proj, mlp_mask[:, i].to(dtype)),
                (layer.self_attn.o_proj, head_channels[:, i]),
            ):

                def zero(module: Any, args: tuple, mask: torch.Tensor = mask) -> tuple:
                    return (args[0] * mask[:, None, :],)

                handles.append(module.register_forward_pre_hook(zero))
        try:
            with torch.no_grad():
                if capture:
                    with self.capture() as captured:
                        out = self(images, instruction, proprio, visual=features)
                else:
                    captured, out = None, self(images, instruction, proprio, visual=features)
        finally:
            for handle in handles:
                handle.remove()
        return out.cpu().numpy().astype(np.float32), captured

    def masks_of(self, patterns: Sequence[Any]) -> tuple[torch.Tensor, torch.Tensor]:
        """Row masks for :meth:`act_rows`: a pattern keeps its channels and heads, ``None``
        keeps everything (dense) and ``"skip"`` nothing (every block reduces to its residual)."""
        from icml26.ecovla.pattern import SparsityPattern

        if isinstance(patterns, str) or not isinstance(patterns, Sequence) or not patterns:
            raise TypeError("TinyVLA.masks_of: patterns must be a non-empty sequence, one per row.")
        if len(patterns) > 100_000:
            raise ValueError("TinyVLA.masks_of: patterns must hold at most 100000 rows.")
        d = self.dims()
        mlp = torch.ones(len(patterns), d.n_layers, d.d_ff)
        heads = torch.ones(len(patterns), d.n_layers, d.n_heads)
        made: dict[int, int] = {}  # pattern object -> the first row that holds its masks
        for row, pattern in enumerate(patterns):
            if isinstance(pattern, str) and pattern == "skip":
                mlp[row] = 0.0
                heads[row] = 0.0
            elif isinstance(pattern, SparsityPattern):
                if id(pattern) in made:  # rows of one policy share its pattern object
                    mlp[row] = mlp[made[id(pattern)]]
                    heads[row] = heads[made[id(pattern)]]
                    continue
                self._check_pattern(pattern)
                made[id(pattern)] = row
                mlp[row] = 0.0
                heads[row] = 0.0
                for i, (m, h) in enumerate(zip(pattern.mlp, pattern.heads, strict=True)):
                    mlp[row, i, m] = 1.0
                    heads[row, i, h] = 1.0
            elif pattern is not None:
                raise TypeError(
                    "TinyVLA.masks_of: patterns must be SparsityPatterns, None or 'skip'; got "
                    f"{type(pattern).__name__}."
                )
        return mlp, heads

    def to_dict(self) -> dict[str, Any]:
        """The constructor config as a JSON-able dict."""
        return asdict(self.config)


def _causal_mask(n: int, like: torch.Tensor) -> torch.Tensor:
    dtype = like.dtype
    return torch.full((n, n), torch.finfo(dtype).min, dtype=dtype, device=like.device).triu(1)[
        None, None
    ]


def _stack(
    observations: Sequence[Mapping[str, Any]], config: TinyVLAConfig, device: Any
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Many env observations as one batch: image, instruction, proprio tensors."""
    if isinstance(observations, Mapping) or not isinstance(observations, Sequence):
        raise TypeError("TinyVLA: observations must be a sequence of observation mappings.")
    if not observations:
        raise ValueError("TinyVLA: observations must not be empty.")
    parts = []
    for i, obs in enumerate(observations):
        try:
            parts.append(_batch(obs, config))
        except (TypeError, ValueError) as err:
            raise type(err)(f"TinyVLA: observations[{i}] is not an observation: {err}") from None
    return tuple(torch.cat(column).to(device) for column in zip(*parts, strict=True))


def _batch(obs: Any, config: TinyVLAConfig) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One env observation as a batch of one: image, instruction, proprio tensors."""
    if not isinstance(obs, Mapping) or not {"image", "instruction", "proprio"} <= set(obs):
        raise TypeError(
            "TinyVLA: obs must be a mapping with 'image', 'instruction' and "
            f"'proprio' (a Shift2DPickPlace observation); got {type(obs).__name__}."
        )
    n = config.image_size
    image = np.asarray(obs["image"])
    if image.shape != (n, n, 3):
        raise ValueError(f"TinyVLA: obs['image'] must have shape ({n}, {n}, 3); got {image.shape}.")
    instruction = np.asarray(obs["instruction"], dtype=np.int64).reshape(-1)
    if instruction.shape != (2,) or not (0 <= instruction[0] < 3 and 0 <= instruction[1] < 2):
        raise ValueError(
            f"TinyVLA: obs['instruction'] must be (object in 0..2, goal in 0..1); "
            f"got {obs['instruction']!r}."
        )
    proprio = np.asarray(obs["proprio"], dtype=np.float32).reshape(-1)
    if proprio.shape != (3,) or not np.all(np.isfinite(proprio)):
        raise ValueError(
            f"TinyVLA: obs['proprio'] must be 3 finite numbers; got {obs['proprio']!r}."
        )
    return (
        torch.from_numpy(np.ascontiguousarray(image))[None],
        torch.from_numpy(instruction)[None],
        torch.from_numpy(proprio)[None],
    )
