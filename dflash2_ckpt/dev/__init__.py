"""Development aids, not the public API: the fixture writer (synth.py), the finding-code emitter index
(emitters.py) and the README table generator (engine_table.py). Tests, benches and fixtures/ use them."""
