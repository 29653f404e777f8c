"""Registered reproductions of NaNA (spec §5), one module per experiment:

- :mod:`.exactness` — N1 exact reconstruction, SCA identity, weight processing;
- :mod:`.planted` — N2 recovery of planted Detector-Effector Units;
- :mod:`.efficiency` — N3 decomposition vs transcoder training time, spliced fidelity;
- :mod:`.causal` — N4 ablating the top SCA units vs random units, neurons, latents (and T);
- :mod:`.concentration` — N5 units needed to cover 80 % of the MLP direct effect;
- :mod:`.minilm_readout` — N6 effector-token coherence of the real MiniLM weights.

The paper's full text was not found. The headline (N3a) is the abstract's "orders-of-magnitude
efficiency gains over training-based interpretability baselines", read as ≥ 100× per layer; every
other threshold is the spec's small-scale target (``source="spec"``). Checks that hold by
construction (exact reconstruction, the SCA sum identity, log-softmax invariance, the exact DEU
splice, recovering planted orthonormal units) are ``sanity`` checks; the stand-in's training
target (T) is a gate of the claims measured on it (N3c, N4, N5). Comparisons are paired per
item (window, prompt, effector) and name their control. Importing this package stays light
(``icml26 list``): torch, transformers and the system's API are imported inside the run
functions.
"""

from icml26.nana.experiments import (
    causal,
    concentration,
    efficiency,
    exactness,
    minilm_readout,
    planted,
)

__all__ = ["causal", "concentration", "efficiency", "exactness", "minilm_readout", "planted"]
