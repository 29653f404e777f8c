"""Hugging Face ``transformers`` interface: HybridLM as a ``PreTrainedModel`` causal LM.

Cooper, Diakonikolas, Ma & Sala, *Expressivity-Efficiency Tradeoffs for Hybrid Sequence Models*
(ICML 2026, arXiv:2603.08859). The wrapper lets a :class:`~icml26.hybrid_seq.HybridLM` be saved
and loaded with ``save_pretrained`` / ``AutoModelForCausalLM.from_pretrained(name_or_dir)``
(safetensors), trained with HF tooling on a real corpus (standard shifted next-token loss, -100
ignored), and built from an HF config. Importing this module needs the extra
(``pip install 'icml26[hybrid_seq]'``).

``generate()`` is HF's own (``GenerationMixin``): greedy or sampling, re-running the whole prefix
at each token (HF's ``past_key_values`` cache is not wired); :meth:`HybridLM.generate` streams
through the recurrent state instead. Deviation: id 0 is an ordinary token here (HF
vocabularies), unlike the synthetic tasks where it is PAD.
"""

from __future__ import annotations

from typing import Any, final

import torch
from torch import nn

from icml26.core import require
from icml26.hybrid_seq.models import HybridLM, check_architecture
from icml26.hybrid_seq.ssm import SSMConfig

_transformers = require("transformers", "hybrid_seq", owner="icml26.hybrid_seq.hf")
PretrainedConfig = _transformers.PretrainedConfig
PreTrainedModel = _transformers.PreTrainedModel
GenerationMixin = _transformers.GenerationMixin
CausalLMOutput = _transformers.modeling_outputs.CausalLMOutput

__all__ = ["HybridLMConfig", "HybridLMForCausalLM", "from_hf_mamba"]

MODEL_TYPE = "icml26_hybrid_lm"


@final
class HybridLMConfig(PretrainedConfig):
    """HF config holding :class:`HybridLM`'s constructor keywords (and the :class:`SSMConfig`).

    Examples
    --------
    >>> HybridLMConfig(vocab_size=50, d_model=16, pattern="SA").pattern
    'SA'
    """

    model_type = MODEL_TYPE

    def __init__(
        self,
        vocab_size: int = 256,
        d_model: int = 64,
        pattern: str = "SA",
        n_heads: int = 4,
        pos_enc: str | None = None,
        d_state: int = 16,
        expand: int = 2,
        d_conv: int = 4,
        dt_rank: int | None = None,
        scan: str = "parallel",
        mlp_ratio: int = 2,
        max_len: int = 2048,
        ssm_backend: str = "auto",
        **kwargs: Any,
    ) -> None:
        # validated here, not first in build(): a bad config is refused where it is written
        check_architecture(
            "HybridLMConfig",
            vocab_size=vocab_size,
            d_model=d_model,
            pattern=pattern,
            n_heads=n_heads,
            pos_enc=pos_enc,
            scan=scan,
            mlp_ratio=mlp_ratio,
            max_len=max_len,
            ssm_backend=ssm_backend,
        )
        SSMConfig(d_state=d_state, expand=expand, d_conv=d_conv, dt_rank=dt_rank)
        self.d_model, self.pattern, self.n_heads, self.pos_enc = d_model, pattern, n_heads, pos_enc
        self.d_state, self.expand, self.d_conv, self.dt_rank = d_state, expand, d_conv, dt_rank
        self.scan, self.mlp_ratio, self.max_len = scan, mlp_ratio, max_len
        self.ssm_backend = ssm_backend
        super().__init__(vocab_size=vocab_size, **kwargs)
        self.vocab_size = vocab_size

    def build(self, seed: int = 0) -> HybridLM:
        """The plain :class:`HybridLM` this config describes, initialised from ``seed``."""
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(
                f"HybridLMConfig.build: seed must be an int; got {type(seed).__name__}."
            )
        ssm = SSMConfig(
            d_state=self.d_state, expand=self.expand, d_conv=self.d_conv, dt_rank=self.dt_rank
        )
        return HybridLM(
            self.vocab_size,
            self.d_model,
            pattern=self.pattern,
            n_heads=self.n_heads,
            pos_enc=self.pos_enc,
            ssm=ssm,
            scan=self.scan,
            mlp_ratio=self.mlp_ratio,
            max_len=self.max_len,
            ssm_backend=self.ssm_backend,
            seed=seed,
        )

    @classmethod
    def from_hybrid_lm(cls, model: HybridLM) -> HybridLMConfig:
        """The config of an existing :class:`HybridLM`."""
        if not isinstance(model, HybridLM):
            raise TypeError(f"model must be a HybridLM; got {type(model).__name__}.")
        c = model.config_dict()
        ssm = c.pop("ssm")
        if ssm["kind"] != "mamba1":
            raise ValueError(
                "model must have Mamba-1 S blocks (an SSMConfig): the HF config does not hold a "
                "Mamba2Config yet; got a HybridLM with Mamba-2 blocks."
            )
        return cls(
            **c,
            d_state=ssm["d_state"],
            expand=ssm["expand"],
            d_conv=ssm["d_conv"],
            dt_rank=ssm["dt_rank"],
            ssm_backend=model.ssm_backend,
        )


@final
class HybridLMForCausalLM(PreTrainedModel, GenerationMixin):
    """A :class:`HybridLM` behind HF's ``PreTrainedModel`` (``save/from_pretrained``, Auto*).

    ``forward(input_ids, labels=None)`` returns ``CausalLMOutput(loss, logits)`` with HF's
    convention: ``labels`` are the input ids, shifted inside (predict token t + 1 at t), -100
    ignored.

    Examples
    --------
    >>> lm = HybridLMForCausalLM(HybridLMConfig(vocab_size=20, d_model=16, n_heads=1))
    >>> ids = torch.tensor([[0, 5, 7, 3]])
    >>> out = lm(input_ids=ids, labels=ids)
    >>> tuple(out.logits.shape), bool(out.loss > 0)
    ((1, 4, 20), True)
    """

    config_class = HybridLMConfig
    base_model_prefix = "model"
    main_input_name = "input_ids"

    def __init__(self, config: HybridLMConfig) -> None:
        super().__init__(config)
        # from_pretrained builds under a meta device; the seeded init draws on the CPU
        with torch.device("cpu"):
            self.model = config.build()
        self.post_init()
        # HF's generate re-runs the whole prefix: no past_key_values cache is wired
        self.generation_config.use_cache = False

    def _init_weights(self, module: nn.Module) -> None:
        """Keep HybridLM's own (seeded, spec §2.2) initialisation."""

    @classmethod
    def from_hybrid_lm(cls, model: HybridLM) -> HybridLMForCausalLM:
        """Wrap a copy of ``model``'s weights (e.g. one trained with :func:`train`)."""
        wrapped = cls(HybridLMConfig.from_hybrid_lm(model))
        wrapped.model.load_state_dict(model.state_dict(), strict=True)
        return wrapped

    def forward(
        self,
        input_ids: torch.Tensor,
        labels: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        **kwargs: Any,
    ) -> Any:
        """Logits (B, T, vocab) and, with ``labels``, the mean next-token cross-entropy.

        ``attention_mask`` is accepted for HF pipelines and must be all ones (no padding:
        the model is causal and left-to-right).
        """
        if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
            raise ValueError("HybridLMForCausalLM: input_ids must be a (batch, T) tensor.")
        input_ids = input_ids.long()
        low, high = int(input_ids.min()), int(input_ids.max())
        if low < 0 or high >= self.config.vocab_size:
            raise ValueError(
                f"HybridLMForCausalLM: input_ids must be in [0, {self.config.vocab_size - 1}]; "
                f"got ids in [{low}, {high}]."
            )
        if attention_mask is not None and not bool((attention_mask == 1).all()):
            raise ValueError("HybridLMForCausalLM: attention_mask must be all ones (no padding).")
        logits = self.model.logits(input_ids)  # (B, T, vocab)
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(
                logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten().long(), ignore_index=-100
            )
        return CausalLMOutput(loss=loss, logits=logits)


_MIXER_WEIGHTS = (
    "in_proj.weight",
    "conv1d.weight",
    "conv1d.bias",
    "x_proj.weight",
    "dt_proj.weight",
    "dt_proj.bias",
    "A_log",
    "D",
    "out_proj.weight",
)


def from_hf_mamba(model: nn.Module) -> HybridLM:
    """A :class:`HybridLM` of ``S`` blocks holding the weights of an HF Mamba-1 model.

    ``model`` is a ``transformers`` ``MambaForCausalLM`` or ``MambaModel`` (tied head: the
    embedding). Its config is checked first; every parameter then maps one to one, under the
    same names, onto pattern ``"S" * num_hidden_layers``: embeddings → ``embedding``, each
    layer's ``norm`` and ``mixer`` (in_proj, conv1d, x_proj, dt_proj, A_log, D, out_proj) →
    ``blocks[i].norm`` / ``blocks[i].mixer``, ``norm_f``, ``lm_head`` → ``head``. The two
    parametrisations are the same equations (:class:`MambaBlock`); what they cannot share is
    refused, never approximated: biases on in_proj / out_proj (``use_bias``), an activation
    other than SiLU (HF gates with SiLU always, so only ``hidden_act="silu"`` matches our
    block), an RMSNorm epsilon other than our 1e-5, a non-integer expansion. A conv without
    bias (``use_conv_bias=False``) maps exactly onto a zero bias. Weights are copied as
    float32; call ``.logits(ids)`` (id 0 is an ordinary token in HF vocabularies).

    Parameters
    ----------
    model
        ``MambaForCausalLM`` or ``MambaModel``.

    Returns
    -------
    HybridLM
        In eval mode, PyTorch scan.

    Raises
    ------
    TypeError
        If ``model`` is not a Mamba-1 ``transformers`` model (its config's ``model_type`` is
        not ``"mamba"``).
    ValueError
        If the config uses a feature our block does not have (named), or ``MambaModel`` has
        untied word embeddings (no head to copy).

    Examples
    --------
    >>> import torch
    >>> from transformers import MambaConfig, MambaForCausalLM
    >>> hf = MambaForCausalLM(MambaConfig(vocab_size=40, hidden_size=16, num_hidden_layers=2))
    >>> ours = from_hf_mamba(hf.eval())
    >>> ids = torch.tensor([[0, 5, 7, 3]])
    >>> bool(torch.allclose(ours.logits(ids), hf(ids).logits, atol=1e-4))
    True
    """
    owner = "from_hf_mamba"
    config = getattr(model, "config", None)
    kind = getattr(config, "model_type", None)
    if not isinstance(model, nn.Module) or kind != "mamba":
        raise TypeError(
            f"{owner}: model must be a transformers MambaForCausalLM or MambaModel (model_type "
            f"'mamba', Mamba-1); got {type(model).__name__} with model_type {kind!r}."
        )
    refused = {
        "use_bias": (config.use_bias, False, "in_proj / out_proj have no bias here"),
        "hidden_act": (config.hidden_act, "silu", "the block's conv activation is SiLU"),
        "layer_norm_epsilon": (config.layer_norm_epsilon, 1e-5, "our RMSNorms use eps 1e-5"),
    }
    for name, (got, supported, why) in refused.items():
        if got != supported:
            raise ValueError(
                f"{owner}: config.{name} must be {supported!r} ({why}); got {got!r}: the "
                "parametrisations would differ, and nothing is approximated."
            )
    d = config.hidden_size
    if config.intermediate_size % d:
        raise ValueError(
            f"{owner}: config.intermediate_size must be an integer multiple of hidden_size (our "
            f"expand is an int); got {config.intermediate_size} and {d}."
        )
    backbone = getattr(model, "backbone", model)
    head = getattr(model, "lm_head", None)
    if head is None and not config.tie_word_embeddings:
        raise ValueError(
            f"{owner}: a MambaModel with tie_word_embeddings=False has no head to copy; pass "
            "the MambaForCausalLM."
        )
    ssm = SSMConfig(
        d_state=config.state_size,
        expand=config.intermediate_size // d,
        d_conv=config.conv_kernel,
        dt_rank=int(config.time_step_rank),
    )
    ours = HybridLM(
        config.vocab_size,
        d,
        pattern="S" * config.num_hidden_layers,
        ssm=ssm,
        pos_enc="none",
        ssm_backend="torch",
    )
    hf = {k: v.detach().float() for k, v in backbone.state_dict().items()}
    state = {"embedding.weight": hf["embeddings.weight"], "norm_f.weight": hf["norm_f.weight"]}
    state["head.weight"] = (hf["embeddings.weight"] if head is None else head.weight).detach()
    for i in range(config.num_hidden_layers):
        state[f"blocks.{i}.norm.weight"] = hf[f"layers.{i}.norm.weight"]
        for name in _MIXER_WEIGHTS:
            key = f"layers.{i}.mixer.{name}"
            if name == "conv1d.bias" and key not in hf:  # use_conv_bias=False: a zero bias
                state[f"blocks.{i}.mixer.{name}"] = torch.zeros(config.intermediate_size)
            else:
                state[f"blocks.{i}.mixer.{name}"] = hf[key]
    ours.load_state_dict({k: v.float() for k, v in state.items()}, strict=True)
    return ours.eval()


_transformers.AutoConfig.register(MODEL_TYPE, HybridLMConfig, exist_ok=True)
_transformers.AutoModelForCausalLM.register(HybridLMConfig, HybridLMForCausalLM, exist_ok=True)
