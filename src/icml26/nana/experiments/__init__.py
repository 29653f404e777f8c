"""Registered reproductions of NaNA (spec §5), one module per experiment:

- :mod:`.exactness` — N1 exact reconstruction, SCA identity, weight processing;
- :mod:`.planted` — N2 recovery of planted Detector-Effector Units;
- :mod:`.efficiency` — N3 decomposition vs transcoder training time, spliced fidelity;
- :mod:`.causal` — N4 ablating the top SCA units vs random units, neurons, latents (and T);
- :mod:`.concentration` — N5 units needed to cover 80 % of the MLP direct effect;
- :mod:`.minilm_readout` — N6 effector-token coherence of the real MiniLM weights.

The paper's full text was not found, so no figure is the paper's: thresholds are the spec's
small-scale targets (``source="spec"``), and checks that hold by construction (exact
reconstruction, the SCA sum identity, log-softmax invariance) are ``sanity`` checks. Importing
this package stays light (``icml26 list``): torch, transformers and the system's API are
imported inside the run functions.
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
