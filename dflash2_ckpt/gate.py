"""Old import path of verify-then-smoke (the README promised `dflash2_ckpt.gate.check`); it lives in
dflash2_ckpt.usecases.verify_smoke."""
from .usecases.verify_smoke import CheckResult, check

__all__ = ["CheckResult", "check"]
