"""dflash2-ckpt: validate and convert DFlash / DFlash2 speculative-decoding draft checkpoints.

The public API is small: inspect(), verify(), the loader guard require_version(), and typed errors.
Nothing here imports torch; the smoke forward lives in dflash2_ckpt.smoke (the `[smoke]` extra).
"""
from .errors import (ConfigError, ConversionError, ConversionUsageError, Dflash2Error, HeaderError,
                     MissingDependencyError, SourceError, SourceFindingsError, UsageError, VersionMismatchError)
from .guard import require_version
from .verify import Report, inspect, verify

__all__ = ["verify", "inspect", "require_version", "Report", "Dflash2Error", "SourceError", "HeaderError",
           "ConfigError", "VersionMismatchError", "ConversionError", "MissingDependencyError", "UsageError",
           "ConversionUsageError", "SourceFindingsError"]
__version__ = "0.1.0"
