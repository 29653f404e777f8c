"""``python -m icml26.copyright_bench``: the benchmark CLI."""

from icml26.copyright_bench.cli import main

if __name__ == "__main__":
    main()
