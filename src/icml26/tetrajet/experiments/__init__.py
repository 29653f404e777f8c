"""Registered reproductions of TetraJet-v2 (spec §5), one module per experiment:

- :mod:`.formats` — ``tetrajet.formats``: NVFP4/E4M3/RHT format checks (C1) and Monte-Carlo
  unbiasedness of the backward (C2);
- :mod:`.oscillation_toy` — ``tetrajet.oscillation_toy``: OsciReset on the STE toy regression (C3);
- :mod:`.lm` — ``tetrajet.lm``: a tiny GPT on Shakespeare under recipes R0-R5 (C4; the headline:
  the gap to FP32 closed by TetraJet-v2 relative to the best prior FP4 recipe of the same run,
  gated on that gap existing).

Checks that hold by construction (exact formats, the unbiasedness of the estimator, the bias of
deterministic rounding) are ``kind="sanity"``; premises of the testbed are gates (the toy
oscillates without reset; the LM trains, its corpus is Shakespeare, an FP4 gap exists, R4
oscillates). Every claim names its control, on which it fails
(``tests/tetrajet/test_tetrajet_controls.py``).

All runs are CPU fake-quantization. The 1.67x speed-up over FP8 needs Blackwell FP4 tensor cores
and is not measured here (see ``docs/tetrajet.md``). Importing this package is light: torch,
scipy and ml_dtypes are imported inside the run functions.
"""

from icml26.tetrajet.experiments import formats, lm, oscillation_toy

__all__ = ["formats", "lm", "oscillation_toy"]
