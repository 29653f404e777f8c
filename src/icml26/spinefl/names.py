"""The names of the comparison harness's tasks and methods (light: no torch, for configs)."""

from __future__ import annotations

__all__ = ["BASELINES", "CONV_METHODS", "METHODS", "TASKS"]

TASKS = ("synthetic", "digits", "fashion_mnist")
BASELINES = ("HeteroFL", "FedRolex", "FedDropout", "FjORD-lite", "FIARSE-lite")
METHODS = (
    "SpineFL",
    *BASELINES,
    "FedAvg-small",
    "FedAvg-full",
    "SpineFL-no-backbone",
    "SpineFL-no-sampling",
    "SpineFL-no-guidance",
    "SpineFL-no-client-history",
)
# the conv testbed's line-up (issue 50): SpineFL, four baselines, three ablations
CONV_METHODS = (
    "SpineFL",
    "HeteroFL",
    "FedRolex",
    "FedDropout",
    "FIARSE-lite",
    "SpineFL-no-backbone",
    "SpineFL-no-sampling",
    "SpineFL-no-guidance",
)
