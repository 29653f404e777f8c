"""Registered reproductions of TACO's claims (spec §5), one module per experiment.

- :mod:`~icml26.taco.experiments.speed_memory` — ``taco.speed_memory`` (E1): predict time,
  multiply-adds and activation memory of TACO vs the uncompressed POT as N grows;
- :mod:`~icml26.taco.experiments.accuracy` — ``taco.accuracy`` (E2 + E3): ROC-AUC of the shipped
  (or freshly meta-trained) TACO and POT on held-out prior tasks and small real tables, against
  random and k-means subsampling and HistGradientBoosting, plus the meta-training loss curve;
- :mod:`~icml26.taco.experiments.competence` — ``taco.competence`` (issue 48): the backbone
  gate on sparse-GLM tables with known Bayes AUC (POT, TACO, LR, HGB, paired per table);
- :mod:`~icml26.taco.experiments.real_tables` — ``taco.real_tables`` (issue 19): the shipped
  ``TACOClassifier`` on 18 real tables from R against POT, logistic regression and HGB.

Importing this package stays light (``icml26 list``): torch, scipy, scikit-learn and the TACO
library are imported inside the run, plot and table functions.
"""

from icml26.taco.experiments import accuracy, competence, real_tables, speed_memory

__all__ = ["accuracy", "competence", "real_tables", "speed_memory"]
