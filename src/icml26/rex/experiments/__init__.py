"""Registered reproductions of Rex (spec §5), one module per experiment:

- :mod:`.learned` — ``rex.learned``: a tiny MLP denoiser trained from scratch: the system's
  headline H (Table 2: Rex has the lowest round-trip MSE of all inversion methods) behind gate
  G1 (the exact baselines are off the float32 round-off floor), sample quality (F3), and exact
  round trips (F1, F2a, F4: sanity);
- :mod:`.roundtrip` — ``rex.roundtrip``: exact data round trips (sanity), noise round trips
  (the spec's claims, conditioning-limited) against DDIM inversion (gate R3);
- :mod:`.order` — ``rex.order``: convergence orders on the Gaussian (closed form: sanity) and a
  mixture (scipy DOP853: Theorem 3.5), with gates showing the measurement separates orders;
- :mod:`.equivalence` — ``rex.equivalence``: Princeps-Euler = DDIM, Princeps-EM =
  SDE-DPM-Solver++(1) (R5, identities: sanity);
- :mod:`.sde_sampling` — ``rex.sde_sampling``: Rex-EM samples with the right moments, closer
  than the non-reversible Princeps-EM (R6).

The analytic problems (Gaussian and the 2-D Gaussian mixture) need no training. Metrics that
vary with the seed are reported on three disjoint subsets of the points (independent values,
:mod:`.common`) or over three seeds (``rex.sde_sampling``). Every experiment runs on one thread:
2-D batches and a 2x128 MLP gain nothing from two (measured: ``rex.roundtrip`` 8.8 s wall and
6 CPU-s on one thread, 53 s and 35 CPU-s on two, on the shared 2-core machine).

Importing this package stays light (``icml26 list``): torch and the rex library are imported
inside the run functions.
"""

from icml26.rex.experiments import equivalence, learned, order, roundtrip, sde_sampling

__all__ = ["equivalence", "learned", "order", "roundtrip", "sde_sampling"]
