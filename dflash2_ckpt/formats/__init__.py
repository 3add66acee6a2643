"""Config dialects (nested `dflash_config`, flat speculators) and the canonical DraftSpec they map into."""
