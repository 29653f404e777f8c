"""Copyright-Bench: agentic evaluation of copyright-law compliance in commercial tasks.

*Copyright-Bench: Agentic Evaluation of Copyright Law Compliance*, ICML 2026 (poster 66009; arXiv
id, authors and code not found). An agent does commercial jobs (a landing page, a T-shirt, a pitch
deck) with tools that search, inspect, download and buy assets; every slot of the job has a lawful
option and an infringing one. Prompt factors vary the user's intent and the time pressure; the
benchmark measures how often the agent's deliverable infringes.

Only the abstract of the paper was found: the legal model, catalog, tools, prompt factors and
scoring are the spec's **inferred design**, and the legal table is a simplification, **not legal
advice**. The package measures; it does not assert the paper's rates.

Deviations (details in docs/copyright_bench.md): see each module's docstring.

Examples
--------
>>> from icml26.copyright_bench import LawfulAgent, copyright_task, evaluate
>>> task = copyright_task(n_per_family=1, grid="neutral")
>>> result = evaluate(task, LawfulAgent())
>>> int(result.episodes["violation"].sum()), float(result.episodes["completed"].mean())
(0, 1.0)
"""

from icml26.core.imports import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, __file__)
