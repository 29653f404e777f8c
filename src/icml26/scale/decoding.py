"""SCALE's single-pass adaptive decoder and the decoding baselines it is compared with (spec §2.4).

One closed-loop step of :class:`ScaleDecoder`:

1. gamma = 1 on the first step, else kappa ** tanh(s * mean(last_u - ema_u)); every vision
   self-attention runs at temperature gamma (:class:`AttentionTemperature`).
2. One prefix pass over [image, instruction] with a KV cache.
3. For each of the K_a action tokens: the last position's logits masked to the action vocabulary,
   u_k (self-uncertainty), tau_k = T0 sigmoid(u_k), a draw from softmax(top-K logits / tau_k)
   (top-1 if tau_k < greedy_below); the token is fed back through one cached pass.
4. (ema_u, last_u) absorb (u_1 .. u_{K_a}).

So SCALE costs what greedy costs: 1 prefix pass + (K_a - 1) cached passes, no verifier.

Baselines: greedy, temperature, top-k and top-p sampling (HF ``generate`` order: temperature,
then top-k, then top-p), and Best-of-N, which draws N candidates with N full decodes and keeps
the verifier's favourite.

Deviations: the alternative uncertainty measures (``measure=``) replace u in the action
temperature only (tau = T0 (1 - p_max) K/(K-1), T0 H(p)/log K, T0 sigmoid(-c SC) with c = 1,
T0 G(p) K/(K-1) with the Gini impurity G = 1 - sum p_i^2; inferred mappings, ablation only)
and the vision path keeps Δu of u; such a tau that is exactly 0 is raised to 1e-12 (a one-hot
row; the draw is the argmax either way).
"""

from __future__ import annotations

import abc
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import torch

from icml26.core.validation import (
    Seed,
    check_in_interval,
    check_one_of,
    check_positive_int,
    torch_generator,
)
from icml26.scale.adapters import VLAAdapter, check_adapter
from icml26.scale.attention import AttentionTemperature
from icml26.scale.uncertainty import (
    UncertaintyState,
    action_logits,
    attention_temperature,
    sample_with_temperature,
    self_uncertainty,
)

__all__ = [
    "BestOfN",
    "DecodeInfo",
    "Decoder",
    "GreedyDecoder",
    "ScaleConfig",
    "ScaleDecoder",
    "ShuffledTauDecoder",
    "TemperatureDecoder",
    "TopKDecoder",
    "TopPDecoder",
    "make_decoder",
    "top_k_filter",
    "top_p_filter",
]

Measure = Literal["self_uncertainty", "p_max", "entropy", "self_certainty", "gini"]
MEASURES = ("self_uncertainty", "p_max", "entropy", "self_certainty", "gini")
_TAU_FLOOR = 1e-12


@dataclass(frozen=True)
class ScaleConfig:
    """SCALE's hyper-parameters (paper defaults, spec §2.5) and the ablation switches.

    Parameters
    ----------
    T0
        Largest sampling temperature, > 0.
    kappa
        Base of the attention temperature, >= 1 (gamma in (1/kappa, kappa)).
    alpha
        EMA factor of the per-dimension uncertainty, in [0, 1).
    attn_sensitivity
        s in gamma = kappa ** tanh(s Δu) (official code; the paper prints s = 1), >= 0.
    eps
        Smoothing of the one-hot reference, in (0, 1/(num_logits - 1)).
    num_logits
        K, the top action tokens kept (``None``: the whole action vocabulary); checked against
        the adapter's action vocabulary at decode time.
    greedy_below
        Rows with tau below it take the top-1 token (unreachable at T0 = 1 with K = 256).
    adaptive_decoding
        False: greedy tokens (the "vision only" ablation).
    adaptive_attention
        False: gamma = 1 always (the "action only" ablation).
    measure
        Which uncertainty sets tau: ``"self_uncertainty"`` (SCALE), ``"p_max"``, ``"entropy"``,
        ``"self_certainty"``, ``"gini"`` (ablations).
    attention_signal
        ``"delta"`` (SCALE: u_{t-1} - EMA_{t-2}) or ``"instantaneous"`` (ablation: u_{t-1}).

    Examples
    --------
    >>> ScaleConfig().kappa, ScaleConfig(adaptive_attention=False).adaptive_decoding
    (2.0, True)
    """

    T0: float = 1.0
    kappa: float = 2.0
    alpha: float = 0.8
    attn_sensitivity: float = 0.3
    eps: float = 1e-12
    num_logits: int | None = 256
    greedy_below: float = 1e-3
    adaptive_decoding: bool = True
    adaptive_attention: bool = True
    measure: Measure = "self_uncertainty"
    attention_signal: Literal["delta", "instantaneous"] = "delta"

    def __post_init__(self) -> None:
        owner = "ScaleConfig"
        for name in ("T0", "kappa", "attn_sensitivity", "greedy_below"):
            value = getattr(self, name)
            low = {"T0": 0.0, "kappa": 1.0}.get(name, 0.0)
            closed = "neither" if name == "T0" else "left"
            check_in_interval(name, value, low=low, high=math.inf, closed=closed, owner=owner)
        check_in_interval("alpha", self.alpha, low=0.0, high=1.0, closed="left", owner=owner)
        if self.num_logits is not None:
            check_positive_int("num_logits", self.num_logits, owner=owner, maximum=1 << 17)
        K = self.num_logits or 2
        high = 1.0 / (K - 1) if K > 1 else 1.0
        check_in_interval("eps", self.eps, low=0.0, high=high, closed="neither", owner=owner)
        for name in ("adaptive_decoding", "adaptive_attention"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{owner}: {name} must be a bool; got {getattr(self, name)!r}.")
        check_one_of("measure", self.measure, MEASURES, owner=owner)
        check_one_of(
            "attention_signal", self.attention_signal, ("delta", "instantaneous"), owner=owner
        )


@dataclass
class DecodeInfo:
    """What one decoded step cost and saw.

    Attributes
    ----------
    u
        ``(B, K_a)`` self-uncertainty of each action token (float64).
    tau
        ``(B, K_a)`` sampling temperature used (0 for a greedy choice).
    gamma
        ``(B,)`` vision attention temperature of this step.
    forward_passes
        Forward passes per sample: prefix passes plus cached token passes.
    prefix_passes
        Of which full prefix passes (image encoder + prompt).
    departed
        ``(B, K_a)`` bool: the chosen token is not the argmax of the logits it was chosen from
        (what greedy decoding would have picked at that token, given the same prefix and the
        same vision temperature); ``None`` where not recorded.
    """

    u: torch.Tensor
    tau: torch.Tensor
    gamma: torch.Tensor
    forward_passes: int
    prefix_passes: int
    departed: torch.Tensor | None = None


def _check_logits(logits: Any, owner: str) -> torch.Tensor:
    """``logits`` if it is a floating tensor with a non-empty last dim (-inf must fit in it)."""
    if not isinstance(logits, torch.Tensor) or logits.ndim == 0 or logits.shape[-1] == 0:
        raise TypeError(f"{owner}: logits must be a tensor with a non-empty last dim.")
    if not logits.is_floating_point():
        raise TypeError(
            f"{owner}: logits must be a floating-point tensor (filtered entries become -inf); "
            f"got dtype {logits.dtype}."
        )
    return logits


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Logits with all but the ``k`` largest of each row set to -inf (HF ``TopKLogitsWarper``).

    Examples
    --------
    >>> top_k_filter(torch.tensor([1.0, 3.0, 2.0]), 2).tolist()
    [-inf, 3.0, 2.0]
    """
    logits = _check_logits(logits, "top_k_filter")
    k = check_positive_int("k", k, owner="top_k_filter", maximum=1 << 20)
    k = min(k, logits.shape[-1])
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, -math.inf)


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Nucleus filter: keep the smallest top set whose probability reaches ``p`` (HF semantics).

    A token is kept iff the probability of the tokens ranked above it is below ``p``, so the
    top-1 token always survives (HF ``TopPLogitsWarper`` with ``min_tokens_to_keep=1``).

    Examples
    --------
    >>> top_p_filter(torch.log(torch.tensor([0.5, 0.3, 0.2])), 0.7).isfinite().tolist()
    [True, True, False]
    """
    logits = _check_logits(logits, "top_p_filter")
    p = check_in_interval("p", p, low=0.0, high=1.0, closed="right", owner="top_p_filter")
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    probs = torch.softmax(sorted_logits.double(), dim=-1)
    mass_before = probs.cumsum(dim=-1) - probs  # probability of the tokens ranked above
    drop_sorted = mass_before >= p
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, -math.inf)


def _draw(logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One index per row from softmax(logits) (rows may hold -inf)."""
    probs = torch.softmax(logits.double(), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


class Decoder(abc.ABC):
    """Decodes the K_a action tokens of one control step through a :class:`VLAAdapter`.

    Subclasses choose a token from the action logits; the loop (one prefix pass, then one
    cached pass per further token) is shared, so every decoder costs the same passes.
    """

    name = "decoder"

    def _gamma(self, state: UncertaintyState | None) -> float | torch.Tensor:
        return 1.0

    def _after(self, state: UncertaintyState | None, u: torch.Tensor) -> None:
        return None

    @abc.abstractmethod
    def _choose(self, logits: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Token index into ``logits`` (B, A) and the temperature used, both ``(B,)``."""

    def decode(
        self,
        adapter: VLAAdapter,
        obs: Any,
        instruction: Any,
        state: UncertaintyState | None = None,
    ) -> tuple[torch.Tensor, DecodeInfo]:
        """Decode one step's action tokens.

        Parameters
        ----------
        adapter
            The model, seen through the :class:`VLAAdapter` protocol.
        obs, instruction
            A batch of observations and instructions, in the adapter's own format.
        state
            The episode's :class:`UncertaintyState` (SCALE reads and updates it; baselines
            ignore it).

        Returns
        -------
        tokens : torch.Tensor
            ``(B, K_a)`` int64 action token ids.
        info : DecodeInfo
            Uncertainties, temperatures, gamma and the forward passes used.
        """
        check_adapter(adapter, type(self).__name__)
        if state is not None and not isinstance(state, UncertaintyState):
            raise TypeError(
                f"{type(self).__name__}: state must be an UncertaintyState or None; "
                f"got {type(state).__name__}."
            )
        tokens, infos = _decode_blocks([self], [None], adapter, obs, instruction, [state])
        return tokens, infos[0]

    @staticmethod
    def _tempers(gamma: float | torch.Tensor) -> bool:
        if isinstance(gamma, torch.Tensor):
            return not bool(torch.all(gamma == 1.0))
        return gamma != 1.0

    def _num_logits(self, part: torch.Tensor) -> int | None:
        return None

    def _eps(self) -> float:
        return 1e-12


def _decode_blocks(
    decoders: list[Decoder],
    sizes: list[int | None],
    adapter: VLAAdapter,
    obs: Any,
    instruction: Any,
    states: list[UncertaintyState | None],
) -> tuple[torch.Tensor, list[DecodeInfo]]:
    """Decode consecutive row blocks of one batch, block i by ``decoders[i]``, in one pass.

    The loop of :meth:`Decoder.decode` (one prefix pass, then one cached pass per further
    token) runs once for the whole batch; each decoder sets the vision temperature of its own
    rows and chooses its own rows' tokens with its own generator, so every block gets what
    ``decoders[i].decode`` would give it alone (up to floating-point effects of the batch
    size). ``sizes[i]`` is block i's row count (``None`` only for a single block: all rows).
    Decoders that override :meth:`Decoder.decode` (Best-of-N, shuffled tau) cannot share.
    """
    start, stop = adapter.action_token_range
    gammas = [d._gamma(s) for d, s in zip(decoders, states, strict=True)]
    if len(decoders) == 1:
        gamma = gammas[0]
    else:
        gamma = torch.cat([torch.as_tensor(g, dtype=torch.float64).reshape(-1).expand(n)
                           for g, n in zip(gammas, sizes, strict=True)])  # fmt: skip
    modules = adapter.vision_attention_modules() if Decoder._tempers(gamma) else []
    tokens, us, taus, departed = [], [], [], []
    with torch.no_grad():
        with AttentionTemperature(modules, gamma):
            logits, cache = adapter.prefill(obs, instruction)
        passes = 1
        bounds = [0]
        for n in sizes:
            bounds.append(bounds[-1] + (n if n is not None else logits.shape[0]))
        rows = [slice(a, b) for a, b in itertools.pairwise(bounds)]
        for k in range(adapter.num_action_tokens):
            part = action_logits(logits, (start, stop))  # (B, A)
            chosen = []
            for d, r in zip(decoders, rows, strict=True):
                u = self_uncertainty(part[r].double(), d._num_logits(part[r]), d._eps())
                chosen.append((*d._choose(part[r], u), u))
            index = torch.cat([c[0] for c in chosen])
            departed.append(index != part.argmax(dim=-1))
            token = start + index
            tokens.append(token)
            taus.append(torch.cat([c[1].double() for c in chosen]))
            us.append(torch.cat([c[2] for c in chosen]))
            if k < adapter.num_action_tokens - 1:
                logits, cache = adapter.step(token, cache)
                passes += 1
    u_all, tau_all = torch.stack(us, dim=-1), torch.stack(taus, dim=-1)  # (B, K_a)
    departed_all = torch.stack(departed, dim=-1)
    infos = []
    for d, s, g, r in zip(decoders, states, gammas, rows, strict=True):
        d._after(s, u_all[r])
        batch = u_all[r].shape[0]
        gamma_t = torch.as_tensor(g, dtype=torch.float64).expand(batch).clone()
        infos.append(DecodeInfo(u_all[r], tau_all[r], gamma_t, passes, 1, departed_all[r]))
    return torch.stack(tokens, dim=-1), infos


class GreedyDecoder(Decoder):
    """Argmax over the action tokens (OpenVLA's default).

    Examples
    --------
    >>> GreedyDecoder()._choose(torch.tensor([[0.0, 2.0, 1.0]]), torch.zeros(1))[0].tolist()
    [1]
    """

    name = "greedy"

    def _choose(self, logits, u):
        return logits.argmax(dim=-1), torch.zeros(logits.shape[0], dtype=torch.float64)


class _Sampler(Decoder):
    def __init__(self, seed: Seed) -> None:
        self.generator = torch_generator(seed)


class TemperatureDecoder(_Sampler):
    """Sampling from softmax(logits / T) over the action tokens.

    Parameters
    ----------
    T
        Temperature, > 0 (paper baseline: 1.0).
    seed
        Seed of the sampling generator.

    Examples
    --------
    >>> TemperatureDecoder(1.0, seed=0).T
    1.0
    """

    name = "temperature"

    def __init__(self, T: float = 1.0, seed: Seed = None) -> None:
        super().__init__(seed)
        self.T = check_in_interval(
            "T", T, low=0.0, high=math.inf, closed="neither", owner="TemperatureDecoder"
        )

    def _choose(self, logits, u):
        tau = torch.full((logits.shape[0],), self.T, dtype=torch.float64)
        return _draw(logits / self.T, self.generator), tau


class TopKDecoder(_Sampler):
    """Top-k sampling: temperature T, then only the k most likely action tokens.

    Parameters
    ----------
    k
        Tokens kept, >= 1 (paper baseline: 40).
    T
        Temperature, > 0 (paper baseline: 0.7).
    seed
        Seed of the sampling generator.

    Examples
    --------
    >>> TopKDecoder().k, TopKDecoder().T
    (40, 0.7)
    """

    name = "top_k"

    def __init__(self, k: int = 40, T: float = 0.7, seed: Seed = None) -> None:
        super().__init__(seed)
        self.k = check_positive_int("k", k, owner="TopKDecoder", maximum=1 << 20)
        self.T = check_in_interval(
            "T", T, low=0.0, high=math.inf, closed="neither", owner="TopKDecoder"
        )

    def _choose(self, logits, u):
        tau = torch.full((logits.shape[0],), self.T, dtype=torch.float64)
        return _draw(top_k_filter(logits / self.T, self.k), self.generator), tau


class TopPDecoder(_Sampler):
    """Nucleus sampling: temperature T, then the smallest top set of probability >= p.

    Parameters
    ----------
    p
        Nucleus mass, in (0, 1] (paper baseline: 0.9).
    T
        Temperature, > 0.
    seed
        Seed of the sampling generator.

    Examples
    --------
    >>> TopPDecoder().p
    0.9
    """

    name = "top_p"

    def __init__(self, p: float = 0.9, T: float = 1.0, seed: Seed = None) -> None:
        super().__init__(seed)
        self.p = check_in_interval("p", p, low=0.0, high=1.0, closed="right", owner="TopPDecoder")
        self.T = check_in_interval(
            "T", T, low=0.0, high=math.inf, closed="neither", owner="TopPDecoder"
        )

    def _choose(self, logits, u):
        tau = torch.full((logits.shape[0],), self.T, dtype=torch.float64)
        return _draw(top_p_filter(logits / self.T, self.p), self.generator), tau


class ScaleDecoder(_Sampler):
    """SCALE: self-uncertainty sets each token's temperature and the vision attention's gamma.

    Parameters
    ----------
    config
        :class:`ScaleConfig` (paper defaults when omitted).
    seed
        Seed of the sampling generator.

    Examples
    --------
    >>> from icml26.scale import TinyARVLA, TinyVLAAdapter
    >>> adapter = TinyVLAAdapter(TinyARVLA(seed=0))
    >>> state = UncertaintyState(3, batch_size=2)
    >>> images = torch.zeros(2, 48, 48, 3, dtype=torch.uint8)
    >>> tokens, info = ScaleDecoder(seed=0).decode(adapter, images, torch.tensor([0, 1]), state)
    >>> tokens.shape, info.forward_passes, state.first
    (torch.Size([2, 3]), 3, False)
    """

    name = "scale"

    def __init__(self, config: ScaleConfig | None = None, seed: Seed = None) -> None:
        super().__init__(seed)
        if config is None:
            config = ScaleConfig()
        if not isinstance(config, ScaleConfig):
            raise TypeError(
                f"ScaleDecoder: config must be a ScaleConfig; got {type(config).__name__}."
            )
        self.config = config

    def _num_logits(self, part):
        n_top, n_action = self.config.num_logits, part.shape[-1]
        if n_top is not None and n_top > n_action:
            raise ValueError(
                f"ScaleDecoder: num_logits ({n_top}) must be in [1, {n_action}], the adapter's "
                "action vocabulary."
            )
        return n_top

    def _eps(self):
        return self.config.eps

    def _gamma(self, state):
        c = self.config
        if state is None or state.first or not c.adaptive_attention:
            return 1.0
        signal = (
            state.delta_batch() if c.attention_signal == "delta" else state.instantaneous_batch()
        )
        gamma = attention_temperature(signal, c.kappa, c.attn_sensitivity)
        return gamma if gamma.ndim else float(gamma)

    def _after(self, state, u):
        if state is None:
            return
        u = u if state.batch_size is not None else u.reshape(-1)
        state.update(u.reshape(state.shape), self.config.alpha)

    def _tau(self, logits: torch.Tensor, u: torch.Tensor, K: int) -> torch.Tensor:
        c = self.config
        if c.measure == "self_uncertainty":
            return c.T0 * torch.sigmoid(u)
        logp = torch.log_softmax(logits.double(), dim=-1).topk(K, dim=-1).values
        logp = logp - torch.logsumexp(logp, dim=-1, keepdim=True)  # top-K renormalised
        p = logp.exp()
        if c.measure == "p_max":
            scale = K / (K - 1) if K > 1 else 1.0
            tau = c.T0 * (1.0 - p[..., 0]) * scale
        elif c.measure == "gini":  # Gini impurity 1 - sum p^2, 1 - 1/K at uniform
            scale = K / (K - 1) if K > 1 else 1.0
            tau = c.T0 * (1.0 - (p * p).sum(dim=-1)) * scale
        elif c.measure == "entropy":
            entropy = -(p * logp).sum(dim=-1)
            tau = c.T0 * entropy / math.log(K) if K > 1 else torch.zeros_like(entropy)
        else:  # self-certainty: KL(uniform || p) over the top-K
            certainty = -math.log(K) - logp.mean(dim=-1)
            tau = c.T0 * torch.sigmoid(-certainty)
        return tau.clamp_min(_TAU_FLOOR)

    def _choose(self, logits, u):
        c = self.config
        if not c.adaptive_decoding:
            return logits.argmax(dim=-1), torch.zeros(logits.shape[0], dtype=torch.float64)
        K = c.num_logits or logits.shape[-1]
        tau = self._tau(logits, u, K)
        top_values, top_ids = logits.topk(K, dim=-1)  # (B, K)
        pick = sample_with_temperature(top_values, tau, self.generator, c.greedy_below)
        return top_ids.gather(-1, pick[:, None]).squeeze(-1), tau


class ShuffledTauDecoder(ScaleDecoder):
    """Control for SCALE: SCALE's own temperatures, drawn independently of the uncertainty.

    Every action token k samples at a temperature drawn at random from ``pools[k]`` (the tau
    values SCALE used for token k, e.g. on the same policy and episodes), so the marginal
    temperatures match SCALE's but do not follow the token's self-uncertainty. Everything else
    (top-K, the vision temperature driven by Δu) is SCALE's.

    Parameters
    ----------
    pools
        One non-empty sequence of temperatures in (0, 1e3] per action token.
    config, seed
        As for :class:`ScaleDecoder`.

    Examples
    --------
    >>> dec = ShuffledTauDecoder([[0.5], [0.1, 0.2], [0.01]], seed=0)
    >>> [len(p) for p in dec.pools]
    [1, 2, 1]
    """

    name = "shuffled_tau"

    def __init__(self, pools: Any, config: ScaleConfig | None = None, seed: Seed = None) -> None:
        super().__init__(config, seed)
        owner = "ShuffledTauDecoder"
        if isinstance(pools, (str, bytes)) or not hasattr(pools, "__len__") or not len(pools):
            raise TypeError(f"{owner}: pools must be a non-empty sequence of tau sequences.")
        self.pools = []
        for k, pool in enumerate(pools):
            try:
                values = torch.as_tensor(pool, dtype=torch.float64).reshape(-1)
            except (TypeError, ValueError, RuntimeError):
                raise TypeError(f"{owner}: pools[{k}] must be a sequence of numbers.") from None
            if values.numel() == 0 or values.numel() > 10**7:
                raise ValueError(f"{owner}: pools[{k}] must hold 1 to 10**7 temperatures.")
            if not bool(torch.all(torch.isfinite(values) & (values > 0) & (values <= 1e3))):
                raise ValueError(f"{owner}: pools[{k}] must hold temperatures in (0, 1e3].")
            self.pools.append(values)
        self._k = 0

    def decode(self, adapter, obs, instruction, state=None):
        """As :meth:`ScaleDecoder.decode`, with the shuffled temperatures."""
        check_adapter(adapter, "ShuffledTauDecoder")
        if adapter.num_action_tokens != len(self.pools):
            raise ValueError(
                f"ShuffledTauDecoder: {len(self.pools)} pools for "
                f"{adapter.num_action_tokens} action tokens."
            )
        self._k = 0
        return super().decode(adapter, obs, instruction, state)

    def _tau(self, logits, u, K):
        pool = self.pools[self._k]
        self._k += 1
        draw = torch.randint(0, pool.numel(), (logits.shape[0],), generator=self.generator)
        return pool[draw]


Verifier = Callable[[Any, Any, torch.Tensor], torch.Tensor]


class BestOfN(Decoder):
    """Best-of-N test-time scaling: N full decodes, the verifier's highest-scoring candidate.

    Parameters
    ----------
    verifier
        ``verifier(obs, instruction, candidates) -> scores``: candidates ``(B, N, K_a)`` token
        ids, scores ``(B, N)`` (higher is better).
    n
        Candidates per step, in [1, 256]; costs N times greedy's forward passes.
    base
        The sampler that draws candidates (default: temperature 1.0).
    seed
        Seed of the default sampler.

    Examples
    --------
    >>> bon = BestOfN(lambda obs, instr, cand: -cand.double().sum(-1), n=4, seed=0)
    >>> bon.n
    4
    """

    name = "best_of_n"

    def __init__(
        self, verifier: Verifier, n: int = 4, base: Decoder | None = None, seed: Seed = None
    ) -> None:
        if not callable(verifier):
            raise TypeError(f"BestOfN: verifier must be callable; got {type(verifier).__name__}.")
        self.verifier = verifier
        self.n = check_positive_int("n", n, owner="BestOfN", maximum=256)
        if base is None:
            base = TemperatureDecoder(1.0, seed=seed)
        if not isinstance(base, Decoder) or isinstance(base, BestOfN):
            raise TypeError(
                f"BestOfN: base must be a (non-BoN) Decoder; got {type(base).__name__}."
            )
        self.base = base

    def _choose(self, logits, u):  # pragma: no cover - decode is overridden
        return self.base._choose(logits, u)

    def decode(self, adapter, obs, instruction, state=None):
        """Draw N candidates with N decodes of ``base``; keep the verifier's best per row."""
        candidates, infos = zip(
            *(self.base.decode(adapter, obs, instruction, None) for _ in range(self.n)), strict=True
        )
        stacked = torch.stack(candidates, dim=1)  # (B, N, K_a)
        scores = self.verifier(obs, instruction, stacked)
        if not isinstance(scores, torch.Tensor) or tuple(scores.shape) != tuple(stacked.shape[:2]):
            raise TypeError(
                f"BestOfN: verifier must return a tensor of shape {tuple(stacked.shape[:2])}."
            )
        best = scores.argmax(dim=1)  # (B,)
        rows = torch.arange(stacked.shape[0])
        u = torch.stack([i.u for i in infos], dim=1)[rows, best]
        tau = torch.stack([i.tau for i in infos], dim=1)[rows, best]
        departed = torch.stack([i.departed for i in infos], dim=1)[rows, best]
        passes = sum(i.forward_passes for i in infos)
        info = DecodeInfo(u, tau, infos[0].gamma, passes, self.n, departed)
        return stacked[rows, best], info


# Every decoder of the paper's comparison and ablations, by name (spec §5 "Methods").
DECODER_NAMES = (
    "greedy",
    "temperature",
    "top_k",
    "top_p",
    "scale",
    "scale_action_only",
    "scale_vision_only",
    "scale_p_max",
    "scale_entropy",
    "scale_self_certainty",
    "scale_gini",
    "scale_instantaneous",
)
_SCALE_VARIANTS = {
    "scale": {},
    "scale_action_only": {"adaptive_attention": False},
    "scale_vision_only": {"adaptive_decoding": False},
    "scale_p_max": {"measure": "p_max"},
    "scale_entropy": {"measure": "entropy"},
    "scale_self_certainty": {"measure": "self_certainty"},
    "scale_gini": {"measure": "gini"},
    "scale_instantaneous": {"attention_signal": "instantaneous"},
}


def make_decoder(
    name: Literal[
        "greedy", "temperature", "top_k", "top_p", "scale", "scale_action_only",
        "scale_vision_only", "scale_p_max", "scale_entropy", "scale_self_certainty",
        "scale_gini", "scale_instantaneous",
    ],
    seed: Seed = None,
) -> Decoder:  # fmt: skip
    """A decoder of the comparison by name, with the paper's hyper-parameters.

    Baselines: greedy, temperature (T=1), top-k (k=40, T=0.7), top-p (p=0.9). SCALE variants:
    ``scale``, ``scale_action_only`` (gamma = 1), ``scale_vision_only`` (greedy tokens),
    ``scale_p_max`` / ``scale_entropy`` / ``scale_self_certainty`` / ``scale_gini`` (other
    measures set tau) and
    ``scale_instantaneous`` (gamma from u_{t-1} instead of Δu).

    Examples
    --------
    >>> make_decoder("scale_vision_only").config.adaptive_decoding
    False
    """
    check_one_of("name", name, DECODER_NAMES, owner="make_decoder")
    if name == "greedy":
        return GreedyDecoder()
    if name == "temperature":
        return TemperatureDecoder(1.0, seed=seed)
    if name == "top_k":
        return TopKDecoder(40, 0.7, seed=seed)
    if name == "top_p":
        return TopPDecoder(0.9, seed=seed)
    return ScaleDecoder(ScaleConfig(**_SCALE_VARIANTS[name]), seed=seed)
