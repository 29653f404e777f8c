import os

# Headless plotting in every test process.
os.environ.setdefault("MPLBACKEND", "Agg")
