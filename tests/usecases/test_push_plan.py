"""push --dry-run's file plan against huggingface_hub's own deletion rule, over random local and remote trees."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from huggingface_hub.hf_api import RepoFile
from hypothesis import given, settings
from hypothesis import strategies as st

from dflash2_ckpt.usecases.push_plan import file_plan, local_files

NAMES = st.sampled_from(
    [
        "config.json",
        "model.safetensors",
        "model-00001-of-00002.safetensors",
        "README.md",
        "sub/extra.safetensors",
        "notes.txt",
        ".gitattributes",
        "logs/run.log",
    ]
)


def _hub_deletions(remote: list[str], patterns: list[str], prefix: str, added: set[str]) -> set[str]:
    """What upload_folder deletes: huggingface_hub's own (private) helper, minus the files it uploads; if
    a release renames it, this oracle must follow."""
    from huggingface_hub import HfApi

    class Api(HfApi):
        def list_repo_files(self, *a: Any, **k: Any) -> list[str]:
            return remote

    ops = Api()._prepare_folder_deletions(
        repo_id="org/x", repo_type="model", revision=None, path_in_repo=prefix, delete_patterns=patterns
    )
    return {op.path_in_repo for op in ops} - added


@settings(max_examples=60, deadline=None)
@given(
    local=st.sets(NAMES, max_size=6),
    remote=st.sets(NAMES, max_size=6),
    same=st.sets(NAMES, max_size=6),
    delete=st.lists(st.sampled_from(["*.safetensors", "*.txt", "logs/*", "*"]), max_size=2),
    prefix=st.sampled_from(["", "dflash"]),
)
def test_the_plan_splits_the_files_as_the_upload_would(
    local: set[str], remote: set[str], same: set[str], delete: list[str], prefix: str
) -> None:
    import hashlib

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in local:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(name.encode())
        files = local_files(root, None, [".*", "**/.*"])
        pre = f"{prefix}/" if prefix else ""
        tree = []
        for name in remote:
            data = name.encode() if name in same else b"other"
            tree.append(
                RepoFile(
                    path=pre + name,
                    size=len(data),
                    oid=hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest(),
                )
            )
        plan = file_plan(root, files, tree, prefix or None, delete)
    sent = {pre + f for f in files}
    assert set(plan.upload) | set(plan.unchanged) == sent and not set(plan.upload) & set(plan.unchanged)
    assert set(plan.unchanged) == {pre + f for f in files if f in remote and f in same}
    assert set(plan.delete) == (
        _hub_deletions(sorted(pre + r for r in remote), delete, prefix, sent) if delete else set()
    )
