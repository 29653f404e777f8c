"""icml26: working implementations and small-scale reproductions of ICML 2026 systems.

Each system is a subpackage (``icml26.<slug>``) with its public API in its ``__init__``; the
shared machinery (experiments, claims, runner, report) lives in :mod:`icml26.core`.
"""

__version__ = "0.1.0"
