"""dflash2-ckpt: validate and convert DFlash / DFlash2 speculative-decoding draft checkpoints.

The public API is this module, and small (docs/library.md): inspect(), verify(), compat() (a verdict per
engine release), check() (verify, then the smoke forward), accept(), the loader guard require_version(),
render() (any report in any of the CLI's formats), their report types, and typed errors. Nothing here
imports torch; the smoke forward's stages live in dflash2_ckpt.smoke (the `[smoke]` extra), accept()
loads torch and transformers only when called (the `[accept]` extra).
"""

# the accept() function shadows the accept subpackage as an attribute, so `dflash2_ckpt.accept(...)`
# works; import submodules with `from dflash2_ckpt.accept.report import ...` (torch loads only when it runs)
from .accept import accept
from .errors import (
    ConfigError,
    ConversionError,
    ConversionUsageError,
    Dflash2Error,
    HeaderError,
    MissingDependencyError,
    SourceError,
    SourceFindingsError,
    UsageError,
    VersionMismatchError,
)

# verify / inspect / Report / require_version load on first use (PEP 562): `dflash2-ckpt --version` and the
# commands that never verify do not pay for the check suite
_LAZY = {
    "verify": "usecases.verify",
    "inspect": "usecases.verify",
    "Report": "usecases.verify",
    "require_version": "usecases.guard",
    "AcceptReport": "accept.report",
    # compat with every advised conversion checked (convert/advice.py), as the command line gives it
    "compat": "convert.advice",
    "CompatReport": "usecases.compat",
    "check": "usecases.verify_smoke",
    "CheckResult": "usecases.verify_smoke",
    "render": "report",
}


def __getattr__(name: str) -> object:
    if name == "__version__":
        from .version import package_version  # lazy: version loads only on this path

        return package_version()
    if name in _LAZY:
        import importlib  # lazy: importlib loads only on this path

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "verify",
    "inspect",
    "compat",
    "check",
    "accept",
    "require_version",
    "render",
    "Report",
    "CompatReport",
    "CheckResult",
    "AcceptReport",
    "Dflash2Error",
    "SourceError",
    "HeaderError",
    "ConfigError",
    "VersionMismatchError",
    "ConversionError",
    "MissingDependencyError",
    "UsageError",
    "ConversionUsageError",
    "SourceFindingsError",
]


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
