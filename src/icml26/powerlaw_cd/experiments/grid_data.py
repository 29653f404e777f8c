"""The datasets of ``powerlaw_cd.grid``: its cells, the cells PCMCI+ runs on, and the shipped
PCMCI+ graphs of the quick preset's datasets (issue 51)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["DATA", "PCMCI_CACHE", "cached_pcmci", "data_key", "grid_cells", "heavy_cells",
           "quick_pcmci_datasets", "write_pcmci_cache"]  # fmt: skip

DATA = {
    "ou_stationary": dict(stock_like=False, stationary=True),
    "ou_nonstationary": dict(stock_like=False, stationary=False),
    "stock_stationary": dict(stock_like=True, stationary=True),
    "stock_nonstationary": dict(stock_like=True, stationary=False),
}


def grid_cells(config: Any) -> list[dict[str, Any]]:
    """The grid's cells: ``simulate_ou`` keywords for every data kind x C x σ_g x σ_b."""
    return [
        dict(n_vars=config.n_vars, length=config.length, p_edge=config.p_edge, strength=c,
             sigma_g=g, sigma_b=b, **DATA[d])
        for d in config.data for c in config.strengths for g in config.sigma_gs
        for b in config.sigma_bs
    ]  # fmt: skip


def heavy_cells(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The F1 cells (stock-like non-stationary, σ_b >= 0.5), where the heavy baselines run."""
    return [c for c in cells if c["stock_like"] and not c["stationary"] and c["sigma_b"] >= 0.5]


def quick_pcmci_datasets(quick: Any) -> list[Any]:
    """The (N, T) arrays quick runs PCMCI+ on: its heavy cells at its first heavy seeds.

    The quick task's seed is ``derive_seed("powerlaw_cd.grid", quick config, 0)``; its dataset
    seeds are drawn from it as :func:`grid` draws them.
    """
    from icml26.core import RunContext
    from icml26.core.runner import derive_seed
    from icml26.powerlaw_cd import simulate_ou
    from icml26.powerlaw_cd.sweep import dataset_seed

    ctx = RunContext(seed=derive_seed("powerlaw_cd.grid", quick, 0))
    base = int(ctx.numpy_generator().integers(2**31))  # as grid() draws its seeds
    return [simulate_ou(seed=np.random.default_rng(dataset_seed(cell, seed)), **cell).X
            for cell in heavy_cells(grid_cells(quick))
            for seed in range(base, base + quick.heavy_seeds)]  # fmt: skip


def write_pcmci_cache(quick: Any, folder: Any = None) -> Any:
    """Compute PCMCI+ on :func:`quick_pcmci_datasets` and write ``data/pcmci_quick.json``.

    ``python -c "from icml26.powerlaw_cd.experiments import grid, grid_data as d;
    d.write_pcmci_cache(grid.GRID_PRESETS['quick'])"``
    (about 15 CPU-s; issue 51).
    """
    import datetime
    import json
    from pathlib import Path

    from icml26.powerlaw_cd import pcmci_plus

    tau_max = quick.max_lags
    graphs = {data_key(X): pcmci_plus(X, tau_max=tau_max).adjacency.tolist()
              for X in quick_pcmci_datasets(quick)}  # fmt: skip
    folder = Path(__file__).resolve().parents[1] / "data" if folder is None else Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = {"tau_max": tau_max, "graphs": graphs, "created": str(datetime.date.today()),
           "command": "icml26.powerlaw_cd.experiments.grid_data.write_pcmci_cache(quick)",
           "what": "PCMCI+ (tigramite, ParCorr, pc_alpha 0.05) on quick's heavy datasets, "
                   "keyed by data_key(X)"}  # fmt: skip
    path = folder / PCMCI_CACHE
    path.write_text(json.dumps(out) + "\n")
    return path


PCMCI_CACHE = "pcmci_quick.json"


def data_key(X: Any) -> str:
    """SHA-256 of a dataset's float64 bytes and shape: the key of the PCMCI+ cache."""
    import hashlib

    X = np.ascontiguousarray(X, dtype=np.float64)
    return hashlib.sha256(repr(X.shape).encode() + X.tobytes()).hexdigest()


def cached_pcmci(max_lags: int) -> Any:
    """PCMCI+ that answers from the shipped graphs of quick's datasets, else computes."""
    import json
    from importlib import resources

    from icml26.powerlaw_cd import CDResult, pcmci_plus

    text = resources.files("icml26.powerlaw_cd").joinpath("data", PCMCI_CACHE).read_text()
    cache = json.loads(text)
    graphs = cache["graphs"] if cache["tau_max"] == max_lags else {}

    def method(X: Any) -> Any:
        hit = graphs.get(data_key(X))
        if hit is None:
            return pcmci_plus(X, tau_max=max_lags)
        n = len(hit)
        return CDResult(np.array(hit, dtype=int), np.full((n, n), np.nan),
                        meta={"method": "pcmci_plus", "tau_max": max_lags,
                              "cached": True})  # fmt: skip

    return method
