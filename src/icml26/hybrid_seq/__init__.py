"""Hybrid Transformer/SSM sequence models: tasks, models, exact constructions, accounting.

Cooper, Diakonikolas, Ma & Sala, "Expressivity-Efficiency Tradeoffs for Hybrid Sequence Models"
(ICML 2026, arXiv:2603.08859). Selective copying and multi-query associative recall generators,
a pure-PyTorch Mamba-1 block with sequential / parallel / streaming scans, ``HybridLM`` over any
pattern of attention (A), Mamba (S) and MLP (M) blocks, parameter and working-memory accounting,
information-theoretic state bounds, explicit hybrids that solve SC and MQAR exactly, and a
training / evaluation loop. The paper's full text was not available: the task generators, the
constructions and the learned-model protocol are our own designs (see docs/hybrid_seq.md).

Examples
--------
>>> from icml26.hybrid_seq import SelectiveCopying, build_sc_hybrid, evaluate, working_memory
>>> task = SelectiveCopying(L=64, k=8, n_symbols=16)
>>> model = build_sc_hybrid(16, max_len=1024)
>>> evaluate(model, task, n=100)[64]
(1.0, 1.0)
>>> working_memory(model, seq_len=1024).recurrent
2
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
