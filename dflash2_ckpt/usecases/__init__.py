"""What a user asks for, on top of an opened checkpoint and the check families: verify and inspect
(verify.py), the engine compatibility verdicts (compat.py), verify then the smoke forward (verify_smoke.py),
the loader guard (guard.py), the pre-upload gate (push.py) and the pre-commit entry points (hooks.py)."""
