"""``python -m debategraph.cli``: the same as the ``debategraph`` command."""

from debategraph.cli.app import main

if __name__ == "__main__":
    main()
