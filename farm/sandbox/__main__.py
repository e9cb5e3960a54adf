"""`python -m farm.sandbox [options]`: the same command as `farm sandbox`."""

from .cli import sandbox

if __name__ == "__main__":
    sandbox(prog_name="python -m farm.sandbox")
