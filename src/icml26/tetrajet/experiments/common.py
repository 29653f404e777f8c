"""Pieces every tetrajet reproduction shares: the paper and the resources of a task."""

from icml26.core import Resources

# Each task runs single-threaded: element-wise fake quantization of small tensors is faster on
# one intra-op thread than on the shared machine's two (measured ~10x in the tests).
RESOURCES = Resources(cpus=1)

PAPER = (
    "Chen et al., TetraJet-v2: Accurate NVFP4 Training for Large Language Models with Oscillation "
    "Suppression and Outlier Control, ICML 2026 (arXiv:2510.27527)"
)
