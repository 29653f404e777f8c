"""Pieces every rex reproduction shares: the paper."""

PAPER = "Blasingame & Liu, Rex: reversible exponential (stochastic) Runge-Kutta solvers, ICML 2026"
