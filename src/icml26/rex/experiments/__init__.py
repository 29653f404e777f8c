"""Registered reproductions of Rex (spec §5), one module per experiment:

- :mod:`.roundtrip` — ``rex.roundtrip``: exact round trips in both directions, ODE and SDE,
  against DDIM inversion (R1-R3);
- :mod:`.order` — ``rex.order``: convergence orders on the Gaussian (closed form) and a mixture
  (scipy DOP853), with controls that must fail (R4);
- :mod:`.equivalence` — ``rex.equivalence``: Princeps-Euler = DDIM, Princeps-EM =
  SDE-DPM-Solver++(1) (R5);
- :mod:`.sde_sampling` — ``rex.sde_sampling``: Rex-EM samples with the right moments (R6);
- :mod:`.learned` — ``rex.learned``: a tiny MLP denoiser trained from scratch: round trips,
  the inversion table, sample quality, adaptive Dopri5 (F1-F4).

The analytic problems (Gaussian and the 2-D Gaussian mixture) need no training, so the core
claims are checked exactly; the analytic experiments run on torch's default two threads, the
learned one on one (a 2x128 MLP on 2-D points is faster on one thread, measured).

Importing this package stays light (``icml26 list``): torch and the rex library are imported
inside the run functions.
"""

from icml26.rex.experiments import equivalence, learned, order, roundtrip, sde_sampling

__all__ = ["equivalence", "learned", "order", "roundtrip", "sde_sampling"]
