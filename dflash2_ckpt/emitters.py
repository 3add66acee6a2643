"""Old import path of the finding-code emitter index (the README promised `dflash2_ckpt.emitters.emitter_of`);
it is a development aid and lives in dflash2_ckpt.dev.emitters."""
from .dev.emitters import declarations, emitter_of, emitters

__all__ = ["declarations", "emitter_of", "emitters"]
