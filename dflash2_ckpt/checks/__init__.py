"""Rules grouped by concern; each takes an opened Checkpoint and returns findings with stable codes."""
