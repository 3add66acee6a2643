"""Old import path of the engine compatibility verdicts (the README promised `dflash2_ckpt.compat.compat`);
they live in dflash2_ckpt.usecases.compat."""
from .usecases.compat import CompatReport, compat

__all__ = ["CompatReport", "compat"]
