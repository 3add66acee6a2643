"""Development aids, not the public API: the fixture writer (synth.py) and the generator of docs/' tables
(doc_tables.py, engine_table.py). Benches and fixtures/ use them; the finding-code emitter index serves only
the tests and lives in tests/_kit/emitters.py."""
