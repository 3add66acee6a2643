"""dflash2-ckpt: validate and convert DFlash / DFlash2 speculative-decoding draft checkpoints.

The public API is small: inspect(), verify(), accept(), the loader guard require_version(), and typed errors.
Nothing here imports torch; the smoke forward lives in dflash2_ckpt.smoke (the `[smoke]` extra),
accept() loads torch and transformers only when called (the `[accept]` extra).
"""
from .errors import (ConfigError, ConversionError, ConversionUsageError, Dflash2Error, HeaderError,
                     MissingDependencyError, SourceError, SourceFindingsError, UsageError, VersionMismatchError)
from .usecases.guard import require_version
# the accept() function shadows the accept subpackage as an attribute, so `dflash2_ckpt.accept(...)`
# works; import submodules with `from dflash2_ckpt.accept.report import ...` (torch loads only when it runs)
from .accept import AcceptReport, accept
from .usecases.verify import Report, inspect, verify

__all__ = ["verify", "inspect", "accept", "require_version", "Report", "AcceptReport", "Dflash2Error", "SourceError",
           "HeaderError", "ConfigError", "VersionMismatchError", "ConversionError", "MissingDependencyError",
           "UsageError", "ConversionUsageError", "SourceFindingsError"]
__version__ = "0.1.0"
