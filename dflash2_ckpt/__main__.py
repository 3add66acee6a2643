"""`python -m dflash2_ckpt ...` runs the CLI (same as the `dflash2-ckpt` script)."""

from .cli import main

main()
