"""The fake Hub fixture of tests/hub, for the audit tests."""
from hub.conftest import hub  # noqa: F401  (a fixture, used by name)
