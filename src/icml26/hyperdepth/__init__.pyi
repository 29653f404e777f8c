from icml26.hyperdepth.baselines import HyperGRACE, TriCLLite, raw_features
from icml26.hyperdepth.data import (
    HypergraphData,
    knn_hypergraph,
    load_digits_hypergraph,
    load_hypergraphx,
    make_hierarchical_hypergraph,
    mask_features,
)
from icml26.hyperdepth.encoder import EncoderOutput, HyperDepthEncoder, projection_head
from icml26.hyperdepth.filters import (
    AbstractFilter,
    BandFilter,
    PolyFilter,
    ProjectorFilter,
    spectral_filters,
)
from icml26.hyperdepth.hierarchy import (
    hyperedge_depth,
    hyperedge_depth_recovery,
    tree_distance_correlation,
)
from icml26.hyperdepth.hypergraph import Hypergraph, drop_incidence_mask
from icml26.hyperdepth.metrics import (
    alignment,
    centroid_sfi,
    dendrogram_purity,
    evaluate_embedding,
    kmeans_nmi,
    linear_probe,
    probe_splits,
    semantic_flattening_index,
    uniformity,
)
from icml26.hyperdepth.objectives import edge_means, group_info_nce, info_nce, membership_loss
from icml26.hyperdepth.prototypes import PrototypeTree, free_energy, gibbs
from icml26.hyperdepth.trainer import HyperDepth, gradient_conflict
from icml26.hyperdepth.training import (
    AbstractContrastiveTrainer,
    GraphView,
    NotFittedError,
    make_view,
)
from icml26.hyperdepth.trees import FMNIST_COARSE, load_fmnist_hypergraph, make_tree_hypergraph
from icml26.hyperdepth.tricl_format import load_tricl_format

__all__ = [
    "FMNIST_COARSE",
    "AbstractContrastiveTrainer",
    "AbstractFilter",
    "BandFilter",
    "EncoderOutput",
    "GraphView",
    "HyperDepth",
    "HyperDepthEncoder",
    "HyperGRACE",
    "Hypergraph",
    "HypergraphData",
    "NotFittedError",
    "PolyFilter",
    "ProjectorFilter",
    "PrototypeTree",
    "TriCLLite",
    "alignment",
    "centroid_sfi",
    "dendrogram_purity",
    "drop_incidence_mask",
    "edge_means",
    "evaluate_embedding",
    "free_energy",
    "gibbs",
    "gradient_conflict",
    "group_info_nce",
    "hyperedge_depth",
    "hyperedge_depth_recovery",
    "info_nce",
    "kmeans_nmi",
    "knn_hypergraph",
    "linear_probe",
    "load_digits_hypergraph",
    "load_fmnist_hypergraph",
    "load_hypergraphx",
    "load_tricl_format",
    "make_hierarchical_hypergraph",
    "make_tree_hypergraph",
    "make_view",
    "mask_features",
    "membership_loss",
    "probe_splits",
    "projection_head",
    "raw_features",
    "semantic_flattening_index",
    "spectral_filters",
    "tree_distance_correlation",
    "uniformity",
]
