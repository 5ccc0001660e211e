"""``python -m mixvox``: the same as the ``mixvox`` command."""

from mixvox.cli import main

if __name__ == "__main__":
    main()
