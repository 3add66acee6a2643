"""`python -m dflash2_ckpt.cli ...` runs the CLI (same as `python -m dflash2_ckpt`)."""

from . import main

main()
