"""I²O: interleaved inference orchestration (EcoVLA, arXiv:2602.00780, §3.4, Eq. 13).

The pattern computation of a trigger step (energies, fusion, scores, top-k, gathering the sliced
weights) leaves the critical path: the inference stream hands the captured X^{int} to a pruning
stream and goes on; the new pattern is swapped in at the first step after it is ready (t + 1
when the pruning stream keeps up). A late pattern never blocks: the step runs with the previous
one. L_sync = T_infer + T_prune becomes L_I²O = T_infer + δ.

Modes: ``"serial"`` (the pattern is computed in the step itself, L_sync), ``"thread"`` (a worker
thread: on CPU this overlaps the pattern work with the environment step and the next frame's
vision encoding), ``"cuda_stream"`` (the worker issues its kernels on a second CUDA stream; needs
CUDA). Pattern requests run in order (FIFO), so the history prior sees the same updates as in
serial mode and, when nothing is late, actions and patterns are identical.

Deviations: the paper's FLOPs-bubble co-scheduling on tensor cores is a GPU property; on CPU
a thread reproduces the scheduling semantics only (spec §5), and wall-clock gains are reported by
the benchmark, never asserted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Literal, final

from icml26.core.validation import check_in_interval, check_one_of
from icml26.ecovla.pattern import SparsityPattern
from icml26.ecovla.pruner import AbstractPolicy, EcoVLAPruner

__all__ = ["InterleavedOrchestrator"]

MODES = ("serial", "thread", "cuda_stream")


@final
class InterleavedOrchestrator(AbstractPolicy):
    """Run an :class:`EcoVLAPruner` with its pattern computation off the acting path.

    Parameters
    ----------
    pruner
        A calibrated ``EcoVLAPruner`` (schedules ``"eap"``, ``"fixed"`` or ``"static"``).
    mode
        ``"serial"``, ``"thread"`` or ``"cuda_stream"``.
    max_wait_s
        How long a step may wait for a pending pattern before acting with the old one (0: never
        wait, the paper's non-blocking swap; larger values make the schedule deterministic).

    Examples
    --------
    >>> from icml26.ecovla import EcoVLAPruner, Shift2DPickPlaceEnv, TinyVLA, TinyVLAConfig
    >>> model = TinyVLA(TinyVLAConfig(d_model=32, n_layers=2, d_ff=64))
    >>> obs, _ = Shift2DPickPlaceEnv().reset(seed=0)
    >>> pruner = EcoVLAPruner(model, ratio=0.4, p=80).calibrate([obs])
    >>> with InterleavedOrchestrator(pruner, mode="thread") as orch:
    ...     orch.step(obs).shape
    (4, 3)
    """

    def __init__(
        self,
        pruner: EcoVLAPruner,
        mode: Literal["serial", "thread", "cuda_stream"] = "thread",
        max_wait_s: float = 0.0,
    ) -> None:
        owner = "InterleavedOrchestrator"
        if not isinstance(pruner, EcoVLAPruner):
            raise TypeError(
                f"{owner}: pruner must be an EcoVLAPruner; got {type(pruner).__name__}."
            )
        if pruner.schedule == "oracle":
            raise ValueError(
                f"{owner}: pruner must not use schedule 'oracle' (it acts with the "
                "pattern of the same step, nothing to interleave)."
            )
        self.mode = check_one_of("mode", mode, MODES, owner=owner)
        self.max_wait_s = check_in_interval(
            "max_wait_s", max_wait_s, low=0.0, high=3600.0, owner=owner
        )
        self._stream = None
        if self.mode == "cuda_stream":
            import torch

            if not torch.cuda.is_available():
                raise ValueError(
                    f"{owner}: mode 'cuda_stream' needs CUDA; choose mode 'serial' "
                    "or 'thread' on this machine."
                )
            self._stream = torch.cuda.Stream()
        self.pruner = pruner
        self._pool = ThreadPoolExecutor(1, "ecovla-pruning") if self.mode != "serial" else None
        self._pending: list[tuple[int, Future]] = []
        self.late_steps = 0

    def __enter__(self) -> InterleavedOrchestrator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Finish pending pattern work and stop the worker."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def reset(self) -> None:
        """Episode start: finish pending work (of the old episode), reset the pruner."""
        self.drain()
        self.late_steps = 0
        self.pruner.reset()

    def drain(self) -> None:
        """Wait for every pending pattern, record it, and adopt the newest (end of an episode)."""
        for t, future in self._pending:
            pattern = future.result()
            self.pruner.records[t] = replace(self.pruner.records[t], made=pattern.key)
            self.pruner.pattern = pattern
        self._pending = []

    def _compute(self, captured: Any, ready: Any = None) -> SparsityPattern:
        if self._stream is None:
            return self.pruner.make_pattern(captured)
        import torch

        self._stream.wait_event(ready)  # the dense step's activations are written
        with torch.cuda.stream(self._stream):
            pattern = self.pruner.make_pattern(captured)
        self._stream.synchronize()
        return pattern

    def _adopt_ready(self) -> SparsityPattern | None:
        """Swap in the newest finished pattern; discard older finished ones."""
        if not self._pending:
            return None
        newest = self._pending[-1][1]
        if not newest.done() and self.max_wait_s > 0:
            with contextlib.suppress(TimeoutError):
                newest.result(timeout=self.max_wait_s)
        done = [i for i, (_, f) in enumerate(self._pending) if f.done()]
        if not done:
            self.late_steps += 1
            return None
        last = done[-1]
        for i in done:  # the records of those trigger steps learn which pattern they made
            t, future = self._pending[i]
            self.pruner.records[t] = replace(self.pruner.records[t], made=future.result().key)
        pattern = self._pending[last][1].result()
        self._pending = self._pending[last + 1 :]
        self.pruner.pattern = pattern
        if self._pending:
            self.late_steps += 1
        return pattern

    def step(self, obs: Mapping[str, Any]) -> Any:
        """One control step: adopt a ready pattern, decide, act, hand off the pattern work."""
        p = self.pruner
        if self.mode == "serial":
            return p.step(obs)
        if self._pool is None:
            raise ValueError("InterleavedOrchestrator: step after close(); make a new one.")
        self._adopt_ready()
        u_t, s_t, features = p.decide(obs)
        dense = u_t or p._t == 0
        action, captured = p.run_backbone(obs, features, dense=dense)
        used = None if dense else p.pattern.key
        made = None
        if u_t:
            ready = None
            if self._stream is not None:
                import torch

                ready = torch.cuda.Event()
                ready.record()
            self._pending.append((p._t, self._pool.submit(self._compute, captured, ready)))
            made = f"pending@{p._t}"
        p._finish(u_t, s_t, dense, used, made, features)
        return action
