"""The fast parse (formats/fast.py) against the pydantic models it stands in for: on every config in the
repository and on mutations of each field, it accepts only what the model accepts, with the same values;
and its table is what the models generate now."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from dflash2_ckpt.dev import fast_schema
from dflash2_ckpt.formats import fast
from dflash2_ckpt.formats.models import MODELS

ROOT = Path(__file__).resolve().parents[2]
# every config.json the repository carries (fixtures, hostile corpus) plus the published ones
CONFIGS = sorted(
    {
        *ROOT.glob("fixtures/**/config.json"),
        *ROOT.glob("fixtures/**/*.config.json"),
        *ROOT.glob("tests/**/config.json"),
    }
)
# what a hostile or careless config puts in a field: each JSON type, bounds, near misses of each rule
PROBES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    8,
    1.0,
    0.5,
    -0.5,
    0.0,
    1e-6,
    1e400,
    -1e400,
    2**40,
    "",
    "x",
    "full_attention",
    "sliding_attention",
    "dflash",
    "dflash2",
    "8",
    [],
    [0],
    [1],
    [-1],
    [0, 1],
    [1.0],
    ["x"],
    [True],
    ["full_attention"],
    [{}],
    {},
    {"rope_theta": 10000.0},
    {"rope_theta": 0},
    {"rope_theta": 1, "rope_type": "yarn", "factor": 4},
    {"name_or_path": "q", "architectures": ["A"]},
    {"verifier": {"name_or_path": "q"}},
]


def _load(p: Path) -> dict[str, Any] | None:
    try:
        obj = json.loads(p.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return obj if isinstance(obj, dict) else None


def _configs() -> list[tuple[str, dict[str, Any]]]:
    out = [(str(p.relative_to(ROOT)), c) for p in CONFIGS if (c := _load(p)) is not None]
    assert len(out) > 30, "the fixtures hold dozens of configs"
    return out


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list) and node:
        yield prefix + (0,)
        yield from _paths(node[0], prefix + (0,))


def _set(cfg: dict[str, Any], path: tuple[Any, ...], value: Any, delete: bool = False) -> dict[str, Any]:
    out = copy.deepcopy(cfg)
    node: Any = out
    for k in path[:-1]:
        node = node[k]
    if delete and isinstance(node, dict):
        del node[path[-1]]
    elif delete:
        node.pop(path[-1])
    else:
        node[path[-1]] = copy.deepcopy(value)
    return out


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types (1 and 1.0 differ: a conversion writes them differently)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def _agree(key: tuple[str, str], cfg: dict[str, Any]) -> str | None:
    """None when the fast parse and the model agree on `cfg`; else what differs."""
    model = MODELS[key]
    got = fast.parse(*key, cfg)
    try:
        want: BaseModel | None = model.model_validate(copy.deepcopy(cfg))
    except ValidationError:
        want = None
    except RecursionError:
        return None
    if got is None:
        return None  # refused: pydantic judges it (a valid config then only costs the import)
    if want is None:
        return "the fast parse accepts a config the model refuses"
    if not _same(got.model_dump(), want.model_dump()):
        return f"model_dump differs: {got.model_dump()} != {want.model_dump()}"
    if not _same(dict(got.model_extra or {}), dict(want.model_extra or {})):
        return "model_extra differs"
    for name in model.model_fields:
        if not _same(fast.dump(getattr(got, name)), fast.dump(getattr(want, name))):
            return f"field {name} differs"
    return None


def test_the_table_is_what_the_models_generate() -> None:
    assert fast_schema.main(["--check"]) == 0, "run: python -m dflash2_ckpt.dev.fast_schema"


@pytest.mark.parametrize("key", sorted(MODELS))
def test_every_repository_config_reads_the_same(key: tuple[str, str]) -> None:
    accepted = 0
    for name, cfg in _configs():
        diff = _agree(key, cfg)
        assert diff is None, f"{name} as {key}: {diff}"
        accepted += fast.parse(*key, cfg) is not None
    # the fixtures hold valid configs of every dialect: the fast parse must take them, or it saves nothing
    assert accepted >= 1, f"no config in the repository parses fast as {key}"


@pytest.mark.parametrize("key", sorted(MODELS))
def test_every_mutation_of_every_field_reads_the_same(key: tuple[str, str]) -> None:
    checked = 0
    valid = [(n, c) for n, c in _configs() if fast.parse(*key, c) is not None][:4]
    for name, cfg in valid:
        for path in _paths(cfg):
            variants = [_set(cfg, path, None, delete=True)] + [_set(cfg, path, v) for v in PROBES]
            for v in variants:
                diff = _agree(key, v)
                assert diff is None, f"{name} with {'.'.join(map(str, path))} changed, as {key}: {diff}"
                checked += 1
        for extra in ("zzz_unknown", "_name_or_path", "model_extra", "model_config", "model_dump"):
            diff = _agree(key, {**cfg, extra: {"a": [1]}})
            assert diff is None, f"{name} with an extra key {extra!r}: {diff}"
    assert checked > 500


def test_a_valid_config_does_not_import_pydantic(tmp_path: Path) -> None:
    """The point of the fast parse: verifying a valid drafter's header loads no pydantic."""
    import subprocess
    import sys

    code = (
        "import sys; from dflash2_ckpt.usecases.verify import verify; r = verify(sys.argv[1]); "
        "assert not r.failed(), r.findings; print('pydantic' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "fixtures/good/nested-v2")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_refused_config_gets_pydantic_findings() -> None:
    """A config the fast parse refuses still gets the model's own findings (DF101 / DF102 with its message)."""
    from dflash2_ckpt.formats.parse import to_spec

    cfg = _load(ROOT / "fixtures/good/nested-v2/config.json")
    assert cfg is not None
    bad = {**cfg, "hidden_size": 8.0}
    del bad["vocab_size"]
    spec, findings = to_spec(bad)
    assert spec is None
    assert sorted((f.code, f.field) for f in findings) == [("DF101", "hidden_size"), ("DF102", "vocab_size")]
    assert "Input should be a valid integer" in next(f.message for f in findings if f.code == "DF101")


# -- the whole parse, both ways: spec and findings from the fast path equal pydantic's, mutation by mutation ------

# keys a hostile or careless config adds or renames to: lone surrogates (JSON "\ud800"), controls, markup,
# another dialect's fields, names of the models' own attributes
ODD_KEYS = [
    "k\ud800",
    "\udc80",
    "\ud83d",
    "a\udfffb",
    "",
    "\x00",
    "\x1b[2J",
    "é",
    "漢字",
    "__proto__",
    "model_extra",
    "model_config",
    "speculators_model_type",
    "dflash_config",
    "transformer_layer_config",
    "target_layer_ids",
    "[bold]",
    "a.b",
    "$",
]
ODD_VALUES: list[Any] = ["\ud800", "x\udc80y", ["\ud800"], {"\ud800": 1}, {"k": "\udfff"}, "\x1b]0;t\x07"]
DIFF_SEEDS = sorted([*ROOT.glob("fixtures/good/*/config.json"), *ROOT.glob("fixtures/real/*.config.json")])


def _both(raw: bytes) -> tuple[Any, Any]:
    """(spec, findings) from load_config + to_spec, with the fast parse and with pydantic alone."""
    from dflash2_ckpt.formats.parse import load_config, to_spec

    out = []
    for use_fast in (True, False):
        cfg, findings = load_config(raw)
        spec = None
        if cfg is not None:
            saved = fast.parse
            if not use_fast:
                fast.parse = lambda *a, **k: None  # type: ignore[assignment]
            try:
                spec, more = to_spec(cfg)
            finally:
                fast.parse = saved  # type: ignore[assignment]
            findings = findings + more
        out.append((spec, [(f.code, f.field, f.message, f.severity) for f in findings]))
    return out[0], out[1]


def _mutations(rng: Any, cfg: dict[str, Any]) -> Iterator[tuple[str, bytes]]:
    """(class, config bytes): every path replaced, deleted, renamed; odd keys added to every object; raw
    non-UTF-8 bytes in a key."""
    dicts = [()] + [p for p in _paths(cfg) if isinstance(_get(cfg, p), dict)]
    for path in _paths(cfg):
        parent_is_dict = isinstance(_get(cfg, path[:-1]), dict)
        yield "delete", _dumps(_set(cfg, path, None, delete=True))
        for v in rng.sample(PROBES, 8):
            yield "replace with a JSON value", _dumps(_set(cfg, path, v))
        yield "replace with a surrogate or control string", _dumps(_set(cfg, path, rng.choice(ODD_VALUES)))
        if parent_is_dict:
            renamed = _rename(cfg, path, str(path[-1]) + rng.choice(["\ud800", "\udc80", "\x00", "é", "_"]))
            yield "rename the key (surrogate, control, suffix)", _dumps(renamed)
    for d in dicts:
        for k in ODD_KEYS:
            yield (
                "add an odd key (surrogate, control, another field)",
                _dumps(_set(cfg, d + (k,), rng.choice(PROBES + ODD_VALUES))),
            )
    raw = _dumps(cfg)
    for k in list(cfg)[:4]:
        yield (
            "non-UTF-8 bytes in a key",
            raw.replace(json.dumps(k).encode(), b'"' + k.encode() + b'\xff\xfe"', 1),
        )


def _get(cfg: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        cfg = cfg[k]
    return cfg


def _rename(cfg: dict[str, Any], path: tuple[Any, ...], new: str) -> dict[str, Any]:
    out = copy.deepcopy(cfg)
    parent = _get(out, path[:-1])
    items = [(new if k == path[-1] else k, v) for k, v in parent.items()]
    parent.clear()
    parent.update(items)
    return out


def _dumps(cfg: Any) -> bytes:
    # json.dumps writes a lone surrogate as the escape "\ud800", as a hostile config.json would hold it
    return json.dumps(cfg).encode()


def test_fast_and_pydantic_give_the_same_spec_and_findings() -> None:
    """>= 5,000 mutations of every seed config (fixtures and published), surrogates and non-UTF-8 keys
    included: the fast path and pydantic alone give equal specs and equal findings (docs/reliability.md
    lists the classes and their counts)."""
    import random
    from collections import Counter

    rng = random.Random(20261203)
    classes: Counter[str] = Counter()
    for seed in DIFF_SEEDS:
        cfg = json.loads(seed.read_bytes())
        for cls, raw in _mutations(rng, cfg):
            with_fast, pydantic_only = _both(raw)
            assert with_fast == pydantic_only, f"{seed.name}, {cls}: {raw[:300]!r}"
            classes[cls] += 1
    print(dict(classes), sum(classes.values()))
    assert sum(classes.values()) >= 5000
    assert min(classes.values()) >= 20, classes


def test_a_surrogate_key_is_pydantics_to_judge() -> None:
    """A lone surrogate in a key (top level or inside dflash_config) is refused by pydantic (DF101); the
    fast path used to accept it and report only DF116."""
    cfg = _load(ROOT / "fixtures/good/nested-v2/config.json")
    assert cfg is not None
    for bad in ({**cfg, "k\ud800": 1}, {**cfg, "dflash_config": {**cfg["dflash_config"], "k\ud800": 1}}):
        assert fast.parse("nested", "v2", bad) is None
        (spec, findings), _ = _both(_dumps(bad))
        assert spec is None and [c for c, *_ in findings] == ["DF101"]
