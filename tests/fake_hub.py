"""A loopback stand-in for the Hugging Face Hub, enough for the real ``huggingface_hub`` client.

It serves what HfApi calls to create a repo, commit regular files and read them back:
``POST /api/repos/create``, ``POST /api/validate-yaml``, ``GET /api/{type}s/{ns}/{name}[/revision/{rev}]``,
``POST …/preupload/{rev}``, ``POST …/commit/{rev}`` (NDJSON), ``GET …/tree/{rev}[/{path}]``,
``HEAD|GET /{type}s/{ns}/{name}/resolve/{rev}/{path}`` and ``GET /api/whoami-v2``. Committed files live
in memory. Faults: ``fail(n, status, path_contains)`` answers the next ``n`` matching requests with
``status`` (500, 429, …), so tests can simulate an outage and its recovery; ``hang(path_contains)`` makes
matching requests wait without answering (a Hub that accepts the connection and then stalls) until
``release_hangs()`` or the server stops.

Also here: ``make_record`` builds real vote records (through ``vote_record``) for the vote tests.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from loopback import LoopbackServer

from sciarena.core.types import Answer, Battle, ModelSpec, Paper, Passage, Reference, Retrieval, SideResult, Usage, Vote
from sciarena.votes.schema import vote_record


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class _Repo:
    files: dict[str, bytes] = field(default_factory=dict)
    oids: dict[str, str] = field(default_factory=dict)  # computed once per commit, as a real Hub stores them
    commits: list[str] = field(default_factory=lambda: ["0" * 40])


@dataclass
class _Fault:
    remaining: int
    status: int
    path_contains: str


class FakeHub(LoopbackServer):
    """Start with ``with FakeHub() as hub:``; ``hub.endpoint`` is the URL to give HfApi / HF_ENDPOINT."""

    def __init__(self) -> None:
        self.repos: dict[str, _Repo] = {}  # key: "datasets/ns/name"
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request, faults included
        self.faults: list[_Fault] = []
        self.lock = threading.Lock()
        self.hang_paths: list[str] = []  # requests whose path contains one of these wait for `released`
        self.released = threading.Event()
        self.hanging = 0  # requests waiting right now

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    @property
    def endpoint(self) -> str:
        return self.root_url

    # --- test helpers -------------------------------------------------------------------------
    def fail(self, n: int, status: int = 500, path_contains: str = "") -> None:
        """Answer the next ``n`` requests whose path contains ``path_contains`` with ``status``."""
        with self.lock:
            self.faults.append(_Fault(n, status, path_contains))

    def hang(self, path_contains: str = "") -> None:
        """From now on, requests whose path contains ``path_contains`` get no answer until released."""
        with self.lock:
            self.released.clear()
            self.hang_paths.append(path_contains)

    def release_hangs(self) -> None:
        """Stop hanging: waiting requests are answered normally, new ones too."""
        with self.lock:
            self.hang_paths.clear()
        self.released.set()

    def stop(self) -> None:
        self.release_hangs()
        super().stop()

    def _should_hang(self, path: str) -> bool:
        with self.lock:
            return any(part in path for part in self.hang_paths)

    def files(self, repo_id: str, repo_type: str = "dataset") -> dict[str, bytes]:
        with self.lock:
            repo = self.repos.get(f"{repo_type}s/{repo_id}")
            return dict(repo.files) if repo else {}

    def records(self, repo_id: str, prefix: str = "data/") -> list[dict[str, Any]]:
        """Every JSON line committed under ``prefix`` (one entry per line, duplicates kept)."""
        out: list[dict[str, Any]] = []
        for path, data in sorted(self.files(repo_id).items()):
            if path.startswith(prefix) and path.endswith(".jsonl"):
                out.extend(json.loads(line) for line in data.decode().splitlines() if line.strip())
        return out

    def commit_count(self, repo_id: str, repo_type: str = "dataset") -> int:
        with self.lock:
            repo = self.repos.get(f"{repo_type}s/{repo_id}")
            return len(repo.commits) - 1 if repo else 0

    def snapshot(self, repo_id: str, dest: Path) -> Path:
        """Write the repo's files under ``dest`` (a plain local copy of what was pushed)."""
        for path, data in self.files(repo_id).items():
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return dest

    def _take_fault(self, path: str) -> int | None:
        with self.lock:
            for fault in self.faults:
                if fault.remaining > 0 and fault.path_contains in path:
                    fault.remaining -= 1
                    return fault.status
            return None


def _handler_for(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:
            self._dispatch("GET")

        def do_HEAD(self) -> None:
            self._dispatch("HEAD")

        def do_POST(self) -> None:
            self._dispatch("POST")

        # --- plumbing ---
        def _send(self, status: int, body: Any = None, headers: dict[str, str] | None = None,
                  raw: bytes | None = None, method: str = "GET") -> None:
            data = raw if raw is not None else json.dumps(body if body is not None else {}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json" if raw is None else "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            if method != "HEAD":
                self.wfile.write(data)

        def _body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _dispatch(self, method: str) -> None:
            parts = urlsplit(self.path)
            path, query = unquote(parts.path), parse_qs(parts.query)
            body = self._body() if method == "POST" else b""
            with hub.lock:
                hub.requests.append((method, path))
            if hub._should_hang(path):
                with hub.lock:
                    hub.hanging += 1
                hub.released.wait()
                with hub.lock:
                    hub.hanging -= 1
            status = hub._take_fault(path)
            if status is not None:
                self._send(status, {"error": f"injected fault {status}"}, {"Retry-After": "0"}, method=method)
                return
            try:
                self._route(method, path, query, body)
            except KeyError as err:
                self._send(404, {"error": f"not found: {err}"}, {"X-Error-Code": "RepoNotFound"}, method=method)

        def _route(self, method: str, path: str, query: dict[str, list[str]], body: bytes) -> None:
            seg = path.strip("/").split("/")
            if path == "/api/whoami-v2":
                return self._send(200, {"type": "user", "name": "tester", "auth": {}})
            if path == "/api/validate-yaml":
                return self._send(200, {"errors": [], "warnings": []})
            if path == "/api/repos/create":
                return self._create(json.loads(body or b"{}"))
            if seg[0] == "api" and len(seg) >= 4 and seg[1] in ("models", "datasets", "spaces"):
                key = "/".join(seg[1:4])
                rest = seg[4:]
                if not rest or rest[0] == "revision":
                    return self._info(key)
                if rest[0] == "preupload":
                    return self._preupload(key, json.loads(body))
                if rest[0] == "commit":
                    return self._commit(key, body)
                if rest[0] == "tree":
                    prefix = "/".join(rest[2:])
                    return self._tree(key, prefix, query.get("recursive", ["false"])[0].lower() == "true")
            if len(seg) >= 5 and seg[0] in ("datasets", "spaces") and seg[3] == "resolve":
                return self._resolve(method, "/".join(seg[:3]), "/".join(seg[5:]))
            if len(seg) >= 4 and seg[2] == "resolve":  # models have no prefix
                return self._resolve(method, "models/" + "/".join(seg[:2]), "/".join(seg[4:]))
            self._send(404, {"error": f"no route for {method} {path}"})

        def _repo(self, key: str) -> _Repo:
            with hub.lock:
                return hub.repos[key]

        def _create(self, payload: dict[str, Any]) -> None:
            repo_id = f"{payload.get('organization') or 'tester'}/{payload['name']}"
            key = f"{payload.get('type') or 'model'}s/{repo_id}"
            url = f"{hub.endpoint}/{key}"
            with hub.lock:
                exists = key in hub.repos
                hub.repos.setdefault(key, _Repo())
            if exists:  # the real Hub also answers 409 with the repo's url
                return self._send(409, {"error": "You already created this repo", "url": url})
            self._send(200, {"url": url, "name": repo_id})

        def _info(self, key: str) -> None:
            repo = self._repo(key)
            with hub.lock:
                siblings = [{"rfilename": p} for p in sorted(repo.files)]
                sha = repo.commits[-1]
            self._send(200, {"id": key.split("/", 1)[1], "sha": sha, "private": False, "siblings": siblings})

        def _preupload(self, key: str, payload: dict[str, Any]) -> None:
            repo = self._repo(key)
            with hub.lock:
                files = [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                          "oid": repo.oids.get(f["path"])}
                         for f in payload["files"]]
            self._send(200, {"files": files})

        def _commit(self, key: str, body: bytes) -> None:
            repo = self._repo(key)
            changes: dict[str, bytes | None] = {}
            for line in body.decode().splitlines():
                item = json.loads(line)
                if item["key"] == "file":
                    changes[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
                elif item["key"] == "deletedFile":
                    changes[item["value"]["path"]] = None
                elif item["key"] != "header":
                    return self._send(400, {"error": f"fake hub does not support {item['key']}"})
            with hub.lock:
                for path, data in changes.items():
                    if data is None:
                        repo.files.pop(path, None)
                        repo.oids.pop(path, None)
                    else:
                        repo.files[path] = data
                        repo.oids[path] = git_blob_sha1(data)
                oid = hashlib.sha1(f"{len(repo.commits)}:{sorted(changes)}".encode()).hexdigest()
                repo.commits.append(oid)
            self._send(200, {"commitOid": oid, "commitUrl": f"{hub.endpoint}/{key}/commit/{oid}"})

        def _tree(self, key: str, prefix: str, recursive: bool) -> None:
            repo = self._repo(key)
            with hub.lock:
                files, oids = dict(repo.files), dict(repo.oids)
            base = prefix.rstrip("/") + "/" if prefix else ""
            if prefix and not any(p.startswith(base) for p in files):
                return self._send(404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"})
            entries: dict[str, dict[str, Any]] = {}
            for path, data in sorted(files.items()):
                if not path.startswith(base):
                    continue
                rel = path[len(base):].split("/")
                if len(rel) > 1 and not recursive:
                    folder = base + rel[0]
                    entries[folder] = {"type": "directory", "path": folder, "oid": "0" * 40}
                    continue
                if recursive:
                    for depth in range(1, len(rel)):
                        folder = base + "/".join(rel[:depth])
                        entries.setdefault(folder, {"type": "directory", "path": folder, "oid": "0" * 40})
                entries[path] = {"type": "file", "path": path, "size": len(data), "oid": oids[path]}
            self._send(200, list(entries.values()))

        def _resolve(self, method: str, key: str, filename: str) -> None:
            repo = self._repo(key)
            with hub.lock:
                data, oid = repo.files.get(filename), repo.oids.get(filename)
                sha = repo.commits[-1]
            if data is None:
                return self._send(404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"},
                                  method=method)
            headers = {"X-Repo-Commit": sha, "ETag": f'"{oid}"'}
            self._send(200, headers=headers, raw=data, method=method)

    return Handler


def make_record(i: int, *, day: str = "2026-11-30", models: tuple[str, ...] = ("Alpha", "Beta", "Gamma"),
                choice: str | None = None, prefix: str = "b") -> dict[str, Any]:
    """A real vote record (through ``vote_record``) for battle ``{prefix}{i}``; varied but deterministic."""
    papers = [Paper(paper_id=f"p{k}", title=f"Paper {k}", authors=("Ada Lovelace", "Alan Turing"),
                    year=2000 + k, venue="Nature" if k % 2 else "", doi=f"10.1/{k}") for k in (1, 2)]
    refs = tuple(Reference(number=k + 1, paper=p, passages=(Passage(f"{p.paper_id}#0", p, f"text {k}"),))
                 for k, p in enumerate(papers))
    retrieval = Retrieval(question=f"Question {i}?", references=refs, backend="local:demo", queries=(f"q{i}",))
    a = ModelSpec(models[i % len(models)], "offline", "a", offline=True)
    b = ModelSpec(models[(i + 1) % len(models)], "offline", "b", offline=True)
    cited_a = (1,) if i % 3 else ()  # some answers cite nothing: empty citation lists must load too
    battle = Battle(
        battle_id=f"{prefix}{i}", question=f"Question {i}?", retrieval=retrieval, model_a=a, model_b=b,
        created_at=0.0,
        side_a=SideResult(a, Answer(f"Answer A{i} [1].", f"Answer A{i} [1].", cited_a), first_token_s=0.1,
                          total_s=0.5),
        side_b=SideResult(b, Answer(f"Answer B{i} [2].", f"Answer B{i} [2].", (2,)), usage=Usage(100, 20),
                          cost_usd=0.001 if i % 2 else None),
        subject="Engineering", question_type="Conceptual Explanation",
    )
    vote = choice or ("A", "B", "tie", "bad")[i % 4]
    return vote_record(Vote(battle, vote, voter_id=f"anon-{i % 5}",  # type: ignore[arg-type]
                            timestamp=f"{day}T06:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"))
