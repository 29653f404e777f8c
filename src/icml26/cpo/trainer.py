"""Real-scale path: CPO as a TRL ``DPOTrainer`` subclass that overrides only the loss.

``ConstrainedPOConfig`` adds the CPO hyper-parameters to TRL's ``DPOConfig``;
``ConstrainedPOTrainer.compute_loss`` scores ``[chosen; rejected]`` with
:func:`~icml26.cpo.losses.sequence_logps` (length-normalised by default, as the official code),
applies :func:`~icml26.cpo.losses.constrained_po_loss` and logs ``frac_in_U`` and the policy's own
preference accuracy beside TRL's reward metrics. Everything else (data, collation, optimisation,
reference model) is TRL's. Needs ``pip install 'icml26[cpo]'`` (trl, transformers, datasets).
DPOConfig options that select or modify TRL's own loss (``loss_type``, ``loss_weights``,
``ld_alpha``, ``f_divergence_type``, ``label_smoothing``, ``use_weighting``, ``rpo_alpha`` in
older TRL) are refused with a ``ValueError`` naming the option instead of being ignored, and so is
a mixture-of-experts router loss. A PEFT policy without a ``ref_model`` is scored against itself
with its adapters disabled (or its ``"ref"`` adapter, when TRL loaded one), as TRL's
``DPOTrainer`` does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import os
import re
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from icml26.core import check_in_interval, check_one_of, require
from icml26.cpo.diagnostics import frac_in_undesirable, policy_preference_accuracy
from icml26.cpo.losses import VARIANTS, constrained_po_loss, sequence_logps

__all__ = ["ConstrainedPOConfig", "ConstrainedPOTrainer", "load_causal_lm"]

_trl = require("trl", "cpo", owner="icml26.cpo.trainer")
DPOConfig, DPOTrainer = _trl.DPOConfig, _trl.DPOTrainer

# DPOConfig options that change TRL's loss, with the one value CPO's loss agrees with (TRL's
# default). CPO replaces the whole objective, so any other value would be silently ignored.
# ``rpo_alpha`` exists only in older TRL (since: loss_type=["sigmoid", "sft"]).
_LOSS_OPTIONS: dict[str, object] = {
    "loss_type": ["sigmoid"],
    "loss_weights": None,
    "ld_alpha": None,
    "f_divergence_type": "reverse_kl",
    "label_smoothing": 0.0,
    "use_weighting": False,
    "rpo_alpha": None,
}


def _check_enum_fields(config: object, owner: str) -> None:
    """Name the field when an enum-valued TrainingArguments option is not one of its values.

    transformers converts these fields itself, with a message that names the enum, not the field.
    """
    for f in dataclasses.fields(config):  # type: ignore[arg-type]
        kinds = typing.get_args(f.type) if not isinstance(f.type, str) else ()
        for kind in (k for k in kinds if isinstance(k, type) and issubclass(k, enum.Enum)):
            value = getattr(config, f.name)
            try:
                kind(value)
            except ValueError:
                allowed = [member.value for member in kind]
                raise ValueError(
                    f"{owner}: {f.name} must be one of {allowed}; got {value!r}."
                ) from None


def _check_loss_options(config: object, owner: str) -> None:
    """Refuse DPOConfig options that CPO's loss would ignore (ValueError naming the option)."""
    for name, allowed in _LOSS_OPTIONS.items():
        value = getattr(config, name, allowed)  # rpo_alpha: absent in TRL 1.16
        if name == "loss_type" and isinstance(value, (str, tuple)):
            value = [value] if isinstance(value, str) else list(value)
        if value != allowed:
            raise ValueError(
                f"{owner}: {name}={value!r} is not supported; CPO replaces TRL's loss, so "
                f"{name} would be ignored. Leave it at {allowed!r} (use trl.DPOTrainer for "
                f"TRL's own loss variants)."
            )


@dataclass
class ConstrainedPOConfig(DPOConfig):
    """TRL ``DPOConfig`` plus the CPO hyper-parameters (official defaults).

    Parameters
    ----------
    variant
        ``"smooth"`` (main CPO), ``"clip"`` or ``"easy"``.
    gamma, tau, alpha
        Margin ``γ ≥ 0``, smoothness ``τ > 0`` and constraint weight ``α ∈ (0, ∞]``.
    average_logps
        Length-normalise sequence scores (official code) instead of summing them.
    cpo_eps
        Clamp level of the ``easy`` variant's reference scores.

    Raises
    ------
    ValueError
        On an unknown variant or out-of-range hyper-parameters.

    Examples
    --------
    >>> cfg = ConstrainedPOConfig(
    ...     output_dir="out", variant="easy", beta=2.5, gamma=0.05, use_cpu=True, bf16=False
    ... )
    >>> cfg.variant, cfg.beta
    ('easy', 2.5)
    """

    variant: str = field(default="smooth", metadata={"help": "smooth, clip or easy"})
    gamma: float = field(default=0.5, metadata={"help": "CPO margin γ"})
    tau: float = field(default=2.0, metadata={"help": "smoothness τ of the adaptive margin"})
    alpha: float = field(default=1.0, metadata={"help": "constraint weight α (inf: DPO)"})
    average_logps: bool = field(default=True, metadata={"help": "length-normalised scores"})
    cpo_eps: float = field(default=1e-6, metadata={"help": "easy: clamp reference scores"})

    def __post_init__(self) -> None:
        owner = "ConstrainedPOConfig"
        check_one_of("variant", self.variant, VARIANTS, owner=owner)
        check_in_interval(
            "gamma", self.gamma, low=0.0, high=float("inf"), closed="left", owner=owner
        )
        check_in_interval("tau", self.tau, low=0.0, closed="neither", owner=owner)
        check_in_interval(
            "alpha", self.alpha, low=0.0, high=float("inf"), closed="right", owner=owner
        )
        check_in_interval("beta", self.beta, low=0.0, closed="neither", owner=owner)
        _check_enum_fields(self, owner)
        super().__post_init__()
        _check_loss_options(self, owner)


class ConstrainedPOTrainer(DPOTrainer):
    """TRL ``DPOTrainer`` whose training objective is the CPO loss.

    Construct it exactly like ``DPOTrainer`` with ``args=ConstrainedPOConfig(...)``.

    Raises
    ------
    TypeError
        If ``args`` is not a :class:`ConstrainedPOConfig`.
    ValueError
        If ``args`` sets a DPOConfig option of TRL's own loss (``loss_type``, ``loss_weights``,
        ``ld_alpha``, ``f_divergence_type``, ``label_smoothing``, ``use_weighting``,
        ``rpo_alpha``), or the model is a mixture of experts whose router loss TRL would add
        (set ``router_aux_loss_coef=0.0``).

    Examples
    --------
    >>> trainer = ConstrainedPOTrainer(  # doctest: +SKIP
    ...     model=load_causal_lm("Qwen/Qwen2.5-0.5B-Instruct")[0],
    ...     args=ConstrainedPOConfig(output_dir="out", variant="easy", beta=2.5, gamma=0.05),
    ...     train_dataset=load_dataset(
    ...         "HuggingFaceH4/ultrafeedback_binarized", split="train_prefs"
    ...     ),
    ... )
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        config = kwargs.get("args", args[2] if len(args) > 2 else None)
        if not isinstance(config, ConstrainedPOConfig):
            raise TypeError(
                "ConstrainedPOTrainer: args must be a ConstrainedPOConfig; "
                f"got {type(config).__name__}."
            )
        _check_loss_options(config, "ConstrainedPOTrainer")  # the config may be edited after init
        super().__init__(*args, **kwargs)
        if self.aux_loss_enabled:
            raise ValueError(
                "ConstrainedPOTrainer: the model returns a mixture-of-experts router loss, which "
                "the CPO loss does not add; set router_aux_loss_coef=0.0 to train without it."
            )

    @contextlib.contextmanager
    def _reference(self) -> Iterator[Any]:
        """The reference model: ``ref_model``, else (PEFT) the policy with its adapters off.

        TRL's own recipe: a new adapter's reference is the base model (adapters disabled); when
        TRL loaded an adapter to re-train, its initial copy is the adapter named ``"ref"``.
        """
        if self.ref_model is not None:
            yield self.ref_model
            return
        from accelerate.utils import is_peft_model
        from trl.trainer.utils import use_adapter

        if not is_peft_model(self.model):
            raise ValueError(
                "ConstrainedPOTrainer: needs ref_model, a PEFT model (its adapters disabled are "
                "the reference) or precompute_ref_log_probs=True; got none of them."
            )
        unwrapped = self.accelerator.unwrap_model(self.model)
        name = "ref" if "ref" in unwrapped.peft_config else None
        with use_adapter(unwrapped, adapter_name=name):
            yield self.model

    def _scores(self, model: Any, inputs: dict[str, Any], labels: torch.Tensor) -> torch.Tensor:
        logits = model(
            input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"], use_cache=False
        ).logits  # (2 * batch, seq, vocab)
        return sequence_logps(logits, labels, average=self.args.average_logps)

    def compute_loss(
        self,
        model: Any,
        inputs: dict[str, Any],
        return_outputs: bool = False,
        num_items_in_batch: Any = None,
    ) -> Any:
        """CPO loss of a ``[chosen; rejected]`` batch; logs CPO's diagnostics."""
        mode = "train" if self.model.training else "eval"
        args = self.args
        labels = inputs["input_ids"].masked_fill(inputs["completion_mask"] == 0, -100)
        policy_chosen, policy_rejected = self._scores(model, inputs, labels).chunk(2)
        if self.precompute_ref_logps:
            ref_chosen, ref_rejected = inputs["ref_chosen_logps"], inputs["ref_rejected_logps"]
            if args.average_logps:  # TRL precomputes summed log-probs
                counts = (labels[:, 1:] != -100).sum(dim=1).chunk(2)
                ref_chosen, ref_rejected = ref_chosen / counts[0], ref_rejected / counts[1]
        else:
            with torch.no_grad(), self._reference() as reference:
                ref_chosen, ref_rejected = self._scores(reference, inputs, labels).chunk(2)
        out = constrained_po_loss(
            policy_chosen,
            policy_rejected,
            ref_chosen,
            ref_rejected,
            beta=args.beta,
            gamma=args.gamma,
            tau=args.tau,
            alpha=args.alpha,
            variant=args.variant,
            eps=args.cpo_eps,
        )
        loss = out.losses.mean()
        delta = (policy_chosen - policy_rejected).detach()
        delta_ref = (ref_chosen - ref_rejected).detach()
        metrics = self._metrics[mode]
        metrics["rewards/chosen"].append(float(out.chosen_rewards.mean()))
        metrics["rewards/rejected"].append(float(out.rejected_rewards.mean()))
        metrics["rewards/accuracies"].append(
            float((out.chosen_rewards > out.rejected_rewards).float().mean())
        )
        metrics["rewards/margins"].append(float((out.chosen_rewards - out.rejected_rewards).mean()))
        metrics["cpo/policy_accuracy"].append(policy_preference_accuracy(delta))
        metrics["cpo/frac_in_U"].append(frac_in_undesirable(delta, delta_ref))
        metrics["cpo/target_margin"].append(float(out.margin.mean()))
        metrics["cpo/delta_ref_mean"].append(float(delta_ref.mean()))
        metrics["cpo/frac_ref_below_gamma"].append(float((delta_ref < args.gamma).float().mean()))
        return (loss, out) if return_outputs else loss


# A hub id: "name" or "owner/name" of ASCII letters, digits, "_", "-" and "." (no "..").
_HUB_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)?")


def _check_name_or_dir(owner: str, name_or_dir: object) -> str:
    """``name_or_dir`` as a string if it names an existing folder or is a hub id."""
    if isinstance(name_or_dir, os.PathLike):
        name_or_dir = os.fspath(name_or_dir)
    if not isinstance(name_or_dir, str):
        raise TypeError(
            f"{owner}: name_or_dir must be a hub id or a folder path (str or PathLike); "
            f"got {type(name_or_dir).__name__}."
        )
    if os.path.isdir(name_or_dir):
        return name_or_dir
    if _HUB_ID.fullmatch(name_or_dir) and ".." not in name_or_dir:
        return name_or_dir
    if os.sep in name_or_dir or name_or_dir.startswith((".", "~")):
        raise FileNotFoundError(f"{owner}: name_or_dir {name_or_dir!r} is no existing folder.")
    raise ValueError(
        f"{owner}: name_or_dir must be an existing folder or a hub id such as 'owner/name'; "
        f"got {name_or_dir!r}."
    )


def load_causal_lm(name_or_dir: str, **kwargs: Any) -> tuple[Any, Any]:
    """Load a causal LM and its tokenizer (hub id or local folder) through ``transformers``.

    Parameters
    ----------
    name_or_dir
        E.g. ``"princeton-nlp/Llama-3-Base-8B-SFT"`` or a folder written by ``save_pretrained``.
    **kwargs
        Passed to ``AutoModelForCausalLM.from_pretrained`` (e.g. ``dtype``).

    Returns
    -------
    tuple
        ``(model, tokenizer)``; a tokenizer without a pad token gets its EOS token as pad.

    Raises
    ------
    TypeError
        If ``name_or_dir`` is not a string or path.
    FileNotFoundError
        If ``name_or_dir`` is a path (not a hub id) of no existing folder.
    ValueError
        If ``name_or_dir`` is neither an existing folder nor a hub id.

    Examples
    --------
    >>> model, tok = load_causal_lm("HuggingFaceH4/mistral-7b-sft-beta")  # doctest: +SKIP
    """
    name_or_dir = _check_name_or_dir("load_causal_lm", name_or_dir)
    transformers = require("transformers", "cpo", owner="load_causal_lm")
    model = transformers.AutoModelForCausalLM.from_pretrained(name_or_dir, **kwargs)
    tokenizer = transformers.AutoTokenizer.from_pretrained(name_or_dir)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer
