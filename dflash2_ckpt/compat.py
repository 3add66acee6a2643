"""Old import path of the engine compatibility verdicts (the README promised `dflash2_ckpt.compat.compat`);
they live in dflash2_ckpt.usecases.compat, with each advised conversion checked by dflash2_ckpt.convert.advice."""
from .convert.advice import compat
from .usecases.compat import CompatReport

__all__ = ["CompatReport", "compat"]
