"""``python -m debategraph.cli``: the same as the ``debategraph`` command."""

from debategraph.cli import main

if __name__ == "__main__":
    main()
