"""Helpers the tests share: the in-process CLI runner (cli.py), the fake Hub on 127.0.0.1 (fakehub.py), and
checkpoint builders (convert.py: small synthetic drafters; engines.py: real-shape ones from published
configs; gguf.py: GGUF files from our converter and hostile rewrites of them). Importable as `_kit` because
pytest puts tests/ and fixtures/ on the path (pyproject.toml `pythonpath`)."""
