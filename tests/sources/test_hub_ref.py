"""What a user may type for a Hub repo: ids, `@revision`, subfolders and Hub web URLs."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _kit.cli import invoke_cli
from _kit.fakehub import FakeHub
from dflash2_ckpt.cli import main
from dflash2_ckpt.sources.hub_ref import RepoRef, parse_repo_ref

HF = "https://huggingface.co"


@pytest.mark.parametrize(
    "text, ref",
    [
        (f"{HF}/org/name", RepoRef("org/name")),
        (f"{HF}/org/name/", RepoRef("org/name")),
        ("https://hf.co/org/name", RepoRef("org/name")),
        (f"{HF}/org/name/tree/main", RepoRef("org/name", "main")),
        (f"{HF}/org/name/tree/v1.0/dflash", RepoRef("org/name", "v1.0", "dflash")),
        (f"{HF}/org/name/tree/main/a/b?x=1#frag", RepoRef("org/name", "main", "a/b")),
        (f"{HF}/org/name/tree/refs%2Fpr%2F3/dflash", RepoRef("org/name", "refs/pr/3", "dflash")),
        (f"{HF}/org/name/blob/main/dflash/config.json", RepoRef("org/name", "main", "dflash")),
        (f"{HF}/org/name/blob/main/config.json", RepoRef("org/name", "main")),
        (f"{HF}/org/name/resolve/abc123/dflash/model.safetensors", RepoRef("org/name", "abc123", "dflash")),
        (f"{HF}/datasets/org/name", None),
        (f"{HF}/spaces/org/name", None),
        (f"{HF}/org", None),
        (f"{HF}/org/name/tree", None),
        (f"{HF}/org/name/blob/main", None),
        (f"{HF}/org/name/commits/main", None),
        (f"{HF}/org/name/tree/main/../x", None),
        ("https://example.com/org/name", None),
    ],
)
def test_hub_urls(text: str, ref: RepoRef | None) -> None:
    assert parse_repo_ref(text) == ref


def test_the_configured_endpoint_host_is_accepted() -> None:
    assert parse_repo_ref(
        "http://hub.internal:8080/org/name/tree/dev", "http://hub.internal:8080"
    ) == RepoRef("org/name", "dev")
    assert parse_repo_ref("http://hub.internal:8080/org/name") is None


_name = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_]{0,12}(\.[A-Za-z0-9]{1,4})?", fullmatch=True)
_rev = st.one_of(st.none(), _name, st.integers(1, 999).map(lambda n: f"refs/pr/{n}"))
_sub = st.one_of(st.none(), st.lists(_name, min_size=1, max_size=3).map("/".join))


@given(_name, _name, _rev, _sub)
def test_id_and_url_forms_round_trip(org: str, name: str, rev: str | None, sub: str | None) -> None:
    ref = RepoRef(f"{org}/{name}", rev, sub)
    text = f"{org}/{name}" + (f"@{rev}" if rev else "") + (f"/{sub}" if sub else "")
    assert parse_repo_ref(text) == ref
    url = (
        f"{HF}/{org}/{name}"
        + (f"/tree/{quote(rev or 'main', safe='')}" if rev or sub else "")
        + (f"/{sub}" if sub else "")
    )
    assert parse_repo_ref(url) == RepoRef(ref.repo_id, rev or ("main" if sub else None), sub)


@given(st.text(max_size=80))
def test_parser_never_raises(text: str) -> None:
    ref = parse_repo_ref(text)
    assert ref is None or ref.repo_id.count("/") == 1


def test_a_url_works_wherever_a_repo_id_does(hub: FakeHub, ckpts: dict[str, Path]) -> None:
    sha = hub.add_commit("org/drafter", ckpts["tiny"], prefix="dflash/", ref="dev")
    target = Path(__file__).resolve().parents[2] / "fixtures" / "targets" / "tiny-target"
    hub.add_commit("org/target", target)
    r = invoke_cli(main, ["verify", f"{hub.url}/org/drafter/tree/dev/dflash", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert f'"commit_sha": "{sha}"' in r.output and '"subfolder": "dflash"' in r.output
    r = invoke_cli(main, ["inspect", f"{hub.url}/org/drafter/blob/dev/dflash/config.json"])
    assert r.exit_code == 0, r.output
    r = invoke_cli(
        main, ["verify", f"{hub.url}/org/drafter/tree/dev/dflash", "--target", f"{hub.url}/org/target"]
    )
    assert r.exit_code in (0, 1) and "DF508" not in r.output, r.output
