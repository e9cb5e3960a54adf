"""``python -m farm``: the same as the ``farm`` command."""

from farm.cli import main

if __name__ == "__main__":
    main()
