"""A small Hugging Face Hub on 127.0.0.1, for the real huggingface_hub client to talk to over HTTP.

It serves what the client needs, as huggingface_hub 2.x expects it (read from file_download.py,
hf_api.py, _commit_api.py and utils/_http.py):
- model info:   GET /api/models/{repo}[/revision/{rev}]  -> {"id", "sha", "siblings": [{rfilename, size}]}
- file resolve: HEAD/GET /{repo}/resolve/{rev}/{path}    -> X-Repo-Commit, ETag, Content-Length, Accept-Ranges;
                safetensors files are redirected (302 + X-Linked-Size / X-Linked-Etag) to /cdn/..., as the Hub
                sends LFS files to its CDN; GET honours `Range` (206 + Content-Range, 416 when unsatisfiable)
- uploads:      POST /api/models/{repo}/preupload/{rev} (every file "regular") and /commit/{rev} (ndjson with
                base64 content; makes a new commit, or a refs/pr/N branch with create_pr=1)
- card check:   POST /api/validate-yaml (upload_folder sends README.md there): 400 for front matter that is not YAML
- file tree:    GET /api/models/{repo}/tree/{rev}[?recursive=true] -> [{type, path, size, oid}] (oid: the git blob
                sha1, as the Hub gives it for a file kept in git), which upload_folder(delete_patterns=...) lists
- repo creation: POST /api/repos/create {name, organization, visibility} (409 when it exists), as create_repo sends it
- errors as the Hub sends them: X-Error-Code RepoNotFound / RevisionNotFound / EntryNotFound / GatedRepo,
  401 "Invalid credentials in Authorization header" for an unknown token.
Files are served from disk with seek + bounded reads, so a sparse 3.8 GB file costs only what is asked.
Every request is logged with the body bytes sent, so tests can prove what was (not) transferred.
Faults (`inject`) make the next matching requests fail as a real Hub or network does: 429 (with
Retry-After), 503, a connection reset before any answer, an answer cut off after its headers ("cut"
on any request; "short" on a Range read), a 206 that honestly sends less than the Range asked for
("partial"), or no answer at all until the server stops ("stall").
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import socket
import struct
import threading
import time
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

Content = Path | bytes
LISTING_PAGE = 100  # repos per page of GET /api/models


@dataclass
class Repo:
    commits: dict[str, dict[str, Content]] = field(default_factory=dict)  # sha -> path -> content
    refs: dict[str, str] = field(default_factory=dict)  # branch / tag / refs/pr/N -> sha
    gated: bool = False  # files need a granted token; model info stays public (as on the Hub)
    private: bool = False  # everything needs a granted token
    granted: set[str] = field(default_factory=set)
    tags: set[str] = field(default_factory=set)
    vanish_after_info: bool = False  # deleted right after its model info is served (gone mid-run)


@dataclass
class Fault:
    kind: str  # "429", "503", "reset", "short", "partial", "stall"; hostile: "trickle", "gzip-bomb",
    #                             "oversized", "deep-json"
    contains: str = ""  # only requests whose path contains this
    times: int = 1  # how many matching requests fail
    retry_after: str | None = None


@dataclass
class Logged:
    method: str
    path: str
    status: int
    sent: int  # body bytes sent
    range: str | None


_BOMB: list[bytes] = []


def gzip_bomb() -> bytes:
    """gzip of `{"pad": "` and 256 MiB of spaces (made once, about 260 KiB: a ratio of 1000)."""
    if not _BOMB:
        import zlib

        z = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        out = [z.compress(b'{"pad": "')]
        block = b" " * (16 << 20)
        for _ in range(16):
            out.append(z.compress(block))
        out.append(z.compress(b'"}') + z.flush())
        _BOMB.append(b"".join(out))
    return _BOMB[0]


def _size(c: Content) -> int:
    return c.stat().st_size if isinstance(c, Path) else len(c)


def _git_oid(c: Content) -> str:
    data = c.read_bytes() if isinstance(c, Path) else c
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _etag(path: str, c: Content) -> str:
    # a stable stand-in for the git / LFS oid: hashing a sparse multi-GB file would cost seconds
    st = f"{path}:{_size(c)}:{c.stat().st_mtime_ns if isinstance(c, Path) else hashlib.sha256(c).hexdigest()}"
    return hashlib.sha256(st.encode()).hexdigest()


class _Server(ThreadingHTTPServer):
    """socketserver prints a traceback to stderr when a client hangs up mid-answer (as a retrying client
    does); that would land in the CLI output under test, so dropped connections are counted instead."""

    dropped = 0

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            self.dropped += 1
            return
        super().handle_error(request, client_address)


class FakeHub:
    def __init__(self, tokens: set[str] | None = None) -> None:
        self.repos: dict[str, Repo] = {}
        self.tokens = tokens or set()  # tokens the server knows at all
        self.log: list[Logged] = []
        self.commit_requests: list[dict[str, Any]] = []
        self.down = False  # answer nothing useful (simulates an outage) when set
        self.latency = 0.0  # seconds each answer waits, as a network round trip would
        self.faults: list[Fault] = []
        self.created: list[dict[str, Any]] = []  # POST /api/repos/create bodies
        self.validated: list[str] = []  # README.md contents sent to /api/validate-yaml
        self.deleted: list[str] = []  # paths commits deleted (deletedFile operations)
        self.trickle_s = 3.0  # seconds between the bytes of a "trickle" answer
        self.stopping = threading.Event()  # ends a trickle when the server shuts down
        self.sizes: dict[str, Any] = {}  # path -> the size model info lists instead of the real one
        self._lock = threading.Lock()
        self._n = 0
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()

    # -- fixture setup ---------------------------------------------------------------------------------
    def new_sha(self, seed: str) -> str:
        with self._lock:
            self._n += 1
            return hashlib.sha1(f"{seed}:{self._n}".encode()).hexdigest()

    def add_commit(
        self,
        repo_id: str,
        files: dict[str, Content] | Path,
        *,
        ref: str = "main",
        prefix: str = "",
        deleted: list[str] | None = None,
        **flags: Any,
    ) -> str:
        """Add a commit holding `files` (or every file under a directory, at `prefix`) and point `ref` at it."""
        repo = self.repos.setdefault(repo_id, Repo())
        for k, v in flags.items():
            setattr(repo, k, v)
        if isinstance(files, Path):
            files = {
                f"{prefix}{p.relative_to(files).as_posix()}": p
                for p in sorted(files.rglob("*"))
                if p.is_file()
            }
        base = dict(repo.commits.get(repo.refs.get(ref, ""), {}))
        base.update(files)
        for path in deleted or ():
            base.pop(path, None)
        sha = self.new_sha(repo_id)
        repo.commits[sha] = base
        repo.refs[ref] = sha
        return sha

    def inject(self, kind: str, contains: str = "", times: int = 1, retry_after: str | None = None) -> Fault:
        """Make the next `times` requests whose path contains `contains` fail with `kind` (see module doc)."""
        fault = Fault(kind, contains, times, retry_after)
        with self._lock:
            self.faults.append(fault)
        return fault

    def take_fault(self, path: str, kinds: tuple[str, ...]) -> Fault | None:
        with self._lock:
            for f in self.faults:
                if f.times > 0 and f.kind in kinds and f.contains in path:
                    f.times -= 1
                    return f
        return None

    # -- accounting ------------------------------------------------------------------------------------------
    def file_bytes(self) -> int:
        """Body bytes sent for file content (resolve + CDN), not API JSON."""
        return sum(e.sent for e in self.log if "/resolve/" in e.path or e.path.startswith("/cdn/"))

    def total_bytes(self) -> int:
        return sum(e.sent for e in self.log)

    def requests(self, method: str | None = None, contains: str = "") -> list[Logged]:
        return [e for e in self.log if (method is None or e.method == method) and contains in e.path]


_RANGE_RE = re.compile(r"^bytes=(\d*)-(\d*)$")


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        # -- plumbing ------------------------------------------------------------------------------------
        def _send(
            self,
            status: int,
            body: bytes = b"",
            headers: dict[str, str] | None = None,
            length: int | None = None,
        ) -> None:
            sent = len(body) if self.command != "HEAD" and body else 0
            # logged before anything goes out (end_headers already flushes a bodiless answer such as a
            # redirect): a client that has read the whole answer finds it in the log; logged later, a
            # loaded machine let the test's next assertions run first
            self._logged(status, sent)
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body) if length is None else length))
            self.end_headers()
            if sent:
                self.wfile.write(body)

        def _logged(self, status: int, sent: int) -> int:
            with hub._lock:
                hub.log.append(
                    Logged(self.command, urlsplit(self.path).path, status, sent, self.headers.get("Range"))
                )
                return len(hub.log) - 1

        def _resent(self, at: int, sent: int) -> None:
            """Correct the byte count of an answer logged before its body went out (a client that stopped
            reading got less than promised)."""
            with hub._lock:
                if hub.log[at].sent != sent:
                    hub.log[at] = replace(hub.log[at], sent=sent)

        def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
            self._send(
                status, json.dumps(obj).encode(), {"Content-Type": "application/json", **(headers or {})}
            )

        def _error(
            self, status: int, code: str | None, message: str, headers: dict[str, str] | None = None
        ) -> None:
            h = {"X-Error-Message": message, **(headers or {})}
            if code:
                h["X-Error-Code"] = code
            self._json(status, {"error": message}, h)

        def _token(self) -> str | None:
            auth = self.headers.get("Authorization") or ""
            return auth[7:] if auth.startswith("Bearer ") else None

        def _body(self) -> bytes:
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def _fail(self, fault: Fault) -> None:
            if fault.kind in ("reset", "cut"):  # RST before any byte, or after a promise of 4 KiB and 16 B
                sent = 0
                if fault.kind == "cut":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "4096")
                    self.end_headers()
                    self.wfile.write(b'{"id": "cut-off"')
                    self.wfile.flush()
                    sent = 16
                self._logged(200 if sent else 0, sent)
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
            elif fault.kind == "trickle":  # a 4 KiB promise, then one byte every hub.trickle_s
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "4096")
                self.end_headers()
                sent = 0
                try:
                    while sent < 4096 and not hub.stopping.is_set():
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        sent += 1
                        hub.stopping.wait(hub.trickle_s)
                except OSError:
                    pass  # the client gave up: what a deadline is for
                self._logged(200, sent)
                self.close_connection = True
            elif fault.kind == "stall":  # the request is read, and nothing is answered until shutdown
                if self.command == "POST":
                    self._body()
                hub.stopping.wait()
                self._logged(0, 0)
                self.close_connection = True
            elif fault.kind == "gzip-bomb":  # 260 KiB of gzip that inflates to 256 MiB
                self._send(200, gzip_bomb(), {"Content-Type": "application/json", "Content-Encoding": "gzip"})
            elif fault.kind == "oversized":  # valid JSON of 80 MB, streamed in pieces
                pad = 80 << 20
                head, tail = b'{"id": "big", "pad": "', b'"}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(head) + pad + len(tail)))
                self.end_headers()
                try:
                    self.wfile.write(head)
                    block = b"a" * (1 << 20)
                    for _ in range(pad >> 20):
                        self.wfile.write(block)
                    self.wfile.write(tail)
                except OSError:
                    pass
                self._logged(200, pad)
                self.close_connection = True
            elif fault.kind == "deep-json":
                self._send(200, b"[" * 200_000 + b"]" * 200_000, {"Content-Type": "application/json"})
            elif fault.kind == "429":
                self._error(
                    429,
                    None,
                    "Too Many Requests",
                    {"Retry-After": fault.retry_after} if fault.retry_after is not None else None,
                )
            else:
                self._send(503, b"Service Unavailable")

        # -- routing -------------------------------------------------------------------------------------
        def do_HEAD(self) -> None:
            self.do_GET()

        def do_GET(self) -> None:
            self._route()

        def do_POST(self) -> None:
            self._route()

        def _route(self) -> None:
            if hub.latency:
                time.sleep(hub.latency)
            if hub.down:
                self._send(503, b"down")
                return
            fault = hub.take_fault(
                urlsplit(self.path).path,
                ("429", "503", "reset", "cut", "trickle", "gzip-bomb", "oversized", "deep-json", "stall"),
            )
            if fault is not None:
                self._fail(fault)
                return
            url = urlsplit(self.path)
            parts = [unquote(p) for p in url.path.split("/")[1:]]  # unquote per segment: revs hold "/"
            token = self._token()
            if token is not None and token not in hub.tokens:
                self._error(401, None, "Invalid credentials in Authorization header")
                return
            if parts[:2] == ["api", "agent-harnesses"]:
                self._json(200, {"standardEnvVars": [], "harnesses": {}})
            elif parts == ["api", "validate-yaml"] and self.command == "POST":
                self._validate_yaml(json.loads(self._body() or b"{}").get("content", ""))
            elif parts == ["api", "repos", "create"] and self.command == "POST":
                self._create(json.loads(self._body() or b"{}"), token)
            elif parts == ["api", "models"] and self.command == "GET":
                self._listing(parse_qs(url.query), token)
            elif parts[:2] == ["api", "models"] and len(parts) >= 4:
                self._api(parts[2] + "/" + parts[3], parts[4:], token, parse_qs(url.query))
            elif parts[:1] == ["cdn"] and len(parts) >= 5:
                self._file("/".join(parts[1:3]), parts[3], "/".join(parts[4:]), token, cdn=True)
            elif len(parts) >= 5 and parts[2] == "resolve":
                self._file(parts[0] + "/" + parts[1], parts[3], "/".join(parts[4:]), token, cdn=False)
            else:
                self._error(404, None, "not found")

        def _repo(self, repo_id: str, token: str | None, files: bool) -> Repo | None:
            repo = hub.repos.get(repo_id)
            if repo is None or (repo.private and token not in repo.granted):
                self._error(401 if token is None else 404, "RepoNotFound", "Repository not found")
                return None
            if files and repo.gated and token not in repo.granted:
                self._error(
                    401 if token is None else 403,
                    "GatedRepo",
                    f"Access to model {repo_id} is restricted and you are not in the authorized list.",
                )
                return None
            return repo

        def _sha(self, repo: Repo, rev: str) -> str | None:
            sha = repo.refs.get(rev) or (rev if rev in repo.commits else None)
            if sha is None:
                self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
            return sha

        # -- endpoints -----------------------------------------------------------------------------------
        def _listing(self, query: dict[str, list[str]], token: str | None) -> None:
            """GET /api/models: search (substring of the id), author, filter (tags), config=True, limit;
            pages of LISTING_PAGE linked with `Link: <…>; rel="next"` as the Hub paginates."""
            search = query.get("search", [""])[0].lower()
            author = query.get("author", [None])[0]
            tags = set(query.get("filter", []))
            with_config = query.get("config", ["false"])[0].lower() == "true"
            start = int(query.get("cursor", ["0"])[0])
            limit = int(query.get("limit", ["0"])[0]) or None
            rows = []
            for repo_id, repo in sorted(hub.repos.items()):
                if (
                    (repo.private and token not in repo.granted)
                    or search not in repo_id.lower()
                    or (author and not repo_id.startswith(author + "/"))
                    or not tags <= repo.tags
                ):
                    continue
                sha = repo.refs.get("main")
                row: dict[str, Any] = {
                    "id": repo_id,
                    "modelId": repo_id,
                    "sha": sha,
                    "tags": sorted(repo.tags),
                    "private": repo.private,
                    "gated": "auto" if repo.gated else False,
                }
                if with_config and sha is not None:
                    cfg = repo.commits[sha].get("config.json")
                    try:
                        row["config"] = json.loads(cfg.read_bytes() if isinstance(cfg, Path) else cfg or b"")
                    except ValueError:
                        pass
                rows.append(row)
            rows = rows[:limit] if limit else rows
            page = rows[start : start + LISTING_PAGE]
            headers = {}
            if start + LISTING_PAGE < len(rows):
                q = {k: v[0] for k, v in query.items()}
                q["cursor"] = str(start + LISTING_PAGE)
                headers["Link"] = f'<{hub.url}/api/models?{urlencode(q)}>; rel="next"'
            self._json(200, page, headers)

        def _api(self, repo_id: str, rest: list[str], token: str | None, query: dict[str, list[str]]) -> None:
            repo = self._repo(repo_id, token, files=False)
            if repo is None:
                return
            if self.command == "GET" and (not rest or rest[0] == "revision"):
                sha = self._sha(repo, "/".join(rest[1:]) if rest else "main")
                if sha is None:
                    return
                blobs = query.get("blobs", ["false"])[0].lower() == "true"
                sib = [
                    {"rfilename": p, **({"size": hub.sizes.get(p, _size(c))} if blobs else {})}
                    for p, c in sorted(repo.commits[sha].items())
                ]
                self._json(
                    200,
                    {
                        "id": repo_id,
                        "modelId": repo_id,
                        "sha": sha,
                        "private": repo.private,
                        "gated": "auto" if repo.gated else False,
                        "siblings": sib,
                    },
                )
                if repo.vanish_after_info:
                    with hub._lock:
                        hub.repos.pop(repo_id, None)
            elif self.command == "POST" and rest and rest[0] == "preupload":
                files = json.loads(self._body() or b"{}").get("files", [])
                self._json(
                    200,
                    {
                        "files": [
                            {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None}
                            for f in files
                        ]
                    },
                )
            elif self.command == "GET" and rest and rest[0] == "tree" and len(rest) >= 2:
                sha = self._sha(repo, unquote(rest[1]))
                if sha is None:
                    return
                under = "/".join(rest[2:])
                self._json(
                    200,
                    [
                        {"type": "file", "path": p, "size": _size(c), "oid": _git_oid(c)}
                        for p, c in sorted(repo.commits[sha].items())
                        if not under or p.startswith(under.rstrip("/") + "/")
                    ],
                )
            elif rest and rest[0] == "discussions":
                self._discussion(repo_id, repo, rest[1:], token)
            elif self.command == "POST" and rest and rest[0] == "commit":
                self._commit(repo_id, repo, "/".join(rest[1:]), parse_qs(urlsplit(self.path).query), token)
            else:
                self._error(404, None, "not found")

        def _validate_yaml(self, content: str) -> None:
            """POST /api/validate-yaml, which upload_folder calls for a README.md: 400 with the errors when
            the front matter is not a YAML mapping."""
            import yaml
            from huggingface_hub.repocard import REGEX_YAML_BLOCK  # the block as the Hub finds it

            hub.validated.append(content)
            m = REGEX_YAML_BLOCK.search(content)
            block = m.group(2) if m else ""
            try:
                ok = isinstance(yaml.safe_load(block) or {}, dict)
            except yaml.YAMLError:
                ok = False
            self._json(
                200 if ok else 400,
                {"errors": [] if ok else [{"message": "invalid metadata"}], "warnings": []},
            )

        def _create(self, body: dict[str, Any], token: str | None) -> None:
            """POST /api/repos/create {name, organization, visibility}: a new repo with one commit, as the Hub
            makes it (.gitattributes on main); 409 when it exists, 401 without a token."""
            repo_id = (
                f"{body.get('organization')}/{body.get('name')}"
                if body.get("organization")
                else body.get("name")
            )
            hub.created.append({"repo": repo_id, **body})
            if token is None:
                self._error(401, None, "You must be authenticated to create a repo")
            elif repo_id in hub.repos:
                self._error(409, None, "You already created this model repo")
            else:
                hub.add_commit(
                    str(repo_id),
                    {".gitattributes": b"*.safetensors filter=lfs\n"},
                    private=body.get("visibility") == "private",
                    granted={token},
                )
                self._json(200, {"url": f"{hub.url}/{repo_id}", "name": repo_id})

        def _discussion(self, repo_id: str, repo: Repo, rest: list[str], token: str | None) -> None:
            # create_pr with hf_xet installed opens the pull request first, then commits to refs/pr/N
            if self.command == "POST" and not rest:
                body = json.loads(self._body() or b"{}")
                if token is None or not body.get("pullRequest"):
                    self._error(401 if token is None else 400, None, "only authenticated pull requests here")
                    return
                num = sum(r.startswith("refs/pr/") for r in repo.refs) + 1
                repo.refs[f"refs/pr/{num}"] = repo.refs["main"]
                self._json(200, {"num": num})
            elif self.command == "GET" and len(rest) == 1 and f"refs/pr/{rest[0]}" in repo.refs:
                self._json(
                    200,
                    {
                        "title": "PR",
                        "num": int(rest[0]),
                        "author": {"name": "tester"},
                        "createdAt": "2024-01-01T00:00:00.000Z",
                        "status": "open",
                        "repo": {"name": repo_id, "type": "model"},
                        "isPullRequest": True,
                        "events": [],
                        "changes": {"base": "refs/heads/main"},
                        "filesWithConflicts": [],
                    },
                )
            else:
                self._error(404, None, "no such discussion")

        def _commit(
            self, repo_id: str, repo: Repo, rev: str, query: dict[str, list[str]], token: str | None
        ) -> None:
            lines = [json.loads(line) for line in self._body().splitlines() if line.strip()]
            hub.commit_requests.append({"repo": repo_id, "revision": rev, "lines": lines, "query": query})
            if token is None or (repo.granted and token not in repo.granted):
                self._error(401, None, "You must be authenticated to commit")
                return
            sha = self._sha(repo, rev)
            if sha is None:
                return
            files = {
                ln["value"]["path"]: base64.b64decode(ln["value"]["content"])
                for ln in lines
                if ln.get("key") == "file"
            }
            deleted = [ln["value"]["path"] for ln in lines if ln.get("key") == "deletedFile"]
            hub.deleted.extend(deleted)
            pr = query.get("create_pr", ["0"])[0] in ("1", "true", "True")
            ref = f"refs/pr/{sum(r.startswith('refs/pr/') for r in repo.refs) + 1}" if pr else rev
            repo.refs.setdefault(ref, sha)
            new = hub.add_commit(repo_id, files, ref=ref, deleted=deleted)
            self._json(
                200,
                {
                    "commitUrl": f"{hub.url}/{repo_id}/commit/{new}",
                    "commitOid": new,
                    "pullRequestUrl": f"{hub.url}/{repo_id}/discussions/{ref.rsplit('/', 1)[-1]}"
                    if pr
                    else None,
                },
            )

        def _file(self, repo_id: str, rev: str, path: str, token: str | None, cdn: bool) -> None:
            repo = self._repo(repo_id, token, files=not cdn)  # the CDN url itself is the credential
            if repo is None:
                return
            sha = self._sha(repo, rev)
            if sha is None:
                return
            content = repo.commits[sha].get(path)
            if content is None:
                self._error(404, "EntryNotFound", f"{path} does not exist", {"X-Repo-Commit": sha})
                return
            size, etag = _size(content), _etag(path, content)
            base = {"X-Repo-Commit": sha, "ETag": f'"{etag}"', "Accept-Ranges": "bytes"}
            if not cdn and path.endswith(".safetensors"):
                self._send(
                    302,
                    b"",
                    {
                        **base,
                        "Location": f"{hub.url}/cdn/{repo_id}/{sha}/{quote(path)}",
                        "X-Linked-Size": str(size),
                        "X-Linked-Etag": f'"{etag}"',
                    },
                )
                return
            start, end = 0, size - 1
            rng = self.headers.get("Range")
            if rng and self.command == "GET":
                m = _RANGE_RE.match(rng.strip())
                a, b = (m.group(1), m.group(2)) if m else ("", "")
                if m and a:
                    start, end = int(a), min(int(b), size - 1) if b else size - 1
                elif m and b:
                    start = max(0, size - int(b))
                if not m or (not a and not b) or start > end:
                    self._send(416, b"", {**base, "Content-Range": f"bytes */{size}"})
                    return
            n = end - start + 1
            partial = bool(rng) and self.command == "GET"
            cut = hub.take_fault(urlsplit(self.path).path, ("short", "partial")) if partial else None
            if cut is not None and cut.kind == "partial" and n > 1:
                end, n = start + n // 2 - 1, n // 2  # a legal 206 that sends less than asked
            if cut is not None and cut.kind == "short" and n > 1:
                self.send_response(206)
                for k, v in {**base, "Content-Range": f"bytes {start}-{end}/{size}"}.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(n))
                self.end_headers()
                sent = self._stream(content, start, n // 2)  # then the connection drops
                self._logged(206, sent)
                self.wfile.flush()
                self.close_connection = True
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                return
            headers = {**base, "Content-Type": "application/octet-stream"}
            if partial:
                headers["Content-Range"] = f"bytes {start}-{end}/{size}"
            self.send_response(206 if partial else 200)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(max(n, 0)))
            # logged before the body, as _send does: the client returns as soon as it has the last byte
            at = self._logged(206 if partial else 200, max(n, 0) if self.command == "GET" else 0)
            self.end_headers()
            if self.command == "GET":
                self._resent(at, self._stream(content, start, n))

        def _stream(self, content: Content, start: int, n: int) -> int:
            if isinstance(content, bytes):
                self.wfile.write(content[start : start + n])
                return len(content[start : start + n])
            sent = 0
            with open(content, "rb") as f:
                f.seek(start)
                while sent < n:
                    chunk = f.read(min(1 << 20, n - sent))
                    if not chunk:
                        break
                    try:
                        self.wfile.write(chunk)
                    except (BrokenPipeError, ConnectionResetError):  # the client stopped reading: fine
                        break
                    sent += len(chunk)
            return sent

    return Handler
