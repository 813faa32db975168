"""A loopback OpenAI-compatible server with a script per model, for offline tests.

``FakeOpenAI`` serves ``POST /v1/chat/completions`` (streamed as SSE over a
chunked response, or as one JSON body) and ``POST /v1/moderations`` on
127.0.0.1, on a random port, from a thread. Each model id answers from its
``Script``: text chunks, optional reasoning chunks, delays, a sequence of HTTP
faults before success (or a fault forever), a stream cut mid-answer (the socket
is closed without ending the chunked body), a stream of ``: keep-alive``
comments that never delivers a chunk, and token usage. Every request is
logged with its JSON body so tests can assert what a client sent, and every
stream the client hung up on is counted (``hangups``).

    with FakeOpenAI() as server:
        server.add_script("o3-like", chunks=("Hello", " world"), faults=(429, 429))
        client = OpenAI(base_url=server.base_url, api_key="k")   # .../v1
        Together(base_url=server.root_url, api_key="k")           # the root: together adds /v1

Requests for a model with no script get a 404 error body, as real servers do.
``point_catalogue_at`` writes a user catalogue file that sends an endpoint's models here.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Literal

from loopback import LoopbackServer

UsageMode = Literal["requested", "always", "never"]


@dataclass(frozen=True)
class Script:
    """How one model answers.

    ``faults``: HTTP statuses returned by the first len(faults) requests, in order;
    ``fail_forever``: a status returned by every request; ``cut_after``: close the
    socket after this many content chunks; ``reasoning_field``: where reasoning
    chunks go ("reasoning_content" or "reasoning"); ``usage``: "requested" sends a
    usage chunk only when ``stream_options.include_usage`` is set (OpenAI),
    "always" sends it regardless (Together), "never" omits it. ``keep_alive_only``: after the
    headers, send an SSE comment every ``keep_alive_every_s`` and nothing else, until the client
    hangs up (or ``keep_alive_limit_s`` passes, so a broken client cannot hang the suite). ``respond``: when set, the
    content chunks are ``respond(request_body)`` instead of ``chunks``, for answers that
    depend on what was asked (e.g. a judge preferring the answer with a marker word).
    """

    chunks: tuple[str, ...] = ("Hello", " world", ".")
    reasoning: tuple[str, ...] = ()
    reasoning_field: str = "reasoning_content"
    chunk_delay_s: float = 0.0
    first_token_delay_s: float = 0.0
    faults: tuple[int, ...] = ()
    fail_forever: int | None = None
    retry_after: str | None = None
    cut_after: int | None = None
    usage: UsageMode = "requested"
    prompt_tokens: int | None = None  # default: words in the request's messages
    finish_reason: str = "stop"
    respond: Callable[[dict[str, Any]], Iterable[str]] | None = None
    keep_alive_only: bool = False
    keep_alive_every_s: float = 0.05
    keep_alive_limit_s: float = 30.0


@dataclass(frozen=True)
class LoggedRequest:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]  # names lower-cased
    started: float


@dataclass
class _State:
    scripts: dict[str, Script] = field(default_factory=dict)
    served: dict[str, int] = field(default_factory=dict)
    log: list[LoggedRequest] = field(default_factory=list)
    hangups: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    hung_up: threading.Condition = field(init=False)  # notified on every request and every hang-up

    def __post_init__(self) -> None:
        self.hung_up = threading.Condition(self.lock)


class FakeOpenAI(LoopbackServer):
    """The server. Use as a context manager; ``base_url`` ends in ``/v1``."""

    def __init__(self, *, api_key: str | None = None, flag_keyword: str = "FLAGGED-TOPIC") -> None:
        self.api_key = api_key  # when set, requests must carry "Authorization: Bearer <api_key>"
        self.flag_keyword = flag_keyword
        self._state = _State()

    # -- scripting --------------------------------------------------------
    def add_script(self, model_id: str, chunks: Iterable[str] = ("Hello", " world", "."), **options: Any) -> Script:
        """Register (or replace) how ``model_id`` answers; options are Script fields."""
        script = Script(chunks=tuple(chunks), **options)
        with self._state.lock:
            self._state.scripts[model_id] = script
            self._state.served[model_id] = 0
        return script

    def requests(self, model_id: str | None = None, path: str = "/v1/chat/completions") -> list[LoggedRequest]:
        """Logged requests to ``path``, optionally only those for ``model_id``."""
        with self._state.lock:
            return [r for r in self._state.log
                    if r.path == path and (model_id is None or r.body.get("model") == model_id)]

    def attempts(self, model_id: str) -> int:
        """How many chat requests ``model_id`` received."""
        return len(self.requests(model_id))

    def hangups(self, model_id: str) -> int:
        """How many of ``model_id``'s streams the client closed before the server ended them."""
        with self._state.lock:
            return self._state.hangups.get(model_id, 0)

    def wait_for_request(self, model_id: str, timeout_s: float = 5.0) -> bool:
        """Block until ``model_id`` has received a chat request; False if none came in time."""
        with self._state.hung_up:
            return self._state.hung_up.wait_for(
                lambda: any(r.body.get("model") == model_id for r in self._state.log), timeout_s)

    def wait_for_hangup(self, model_id: str, timeout_s: float = 5.0) -> bool:
        """Block until a client has hung up on a ``model_id`` stream; False if none did in time."""
        with self._state.hung_up:
            return self._state.hung_up.wait_for(lambda: self._state.hangups.get(model_id, 0) > 0, timeout_s)

    # -- lifecycle ----------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        return type("Handler", (_Handler,), {"fake": self})

    # -- used by the handler ----------------------------------------------
    def _next_turn(self, model_id: str) -> tuple[Script | None, int]:
        with self._state.lock:
            script = self._state.scripts.get(model_id)
            turn = self._state.served.get(model_id, 0)
            self._state.served[model_id] = turn + 1
            return script, turn

    def _log(self, entry: LoggedRequest) -> None:
        with self._state.hung_up:
            self._state.log.append(entry)
            self._state.hung_up.notify_all()

    def _hangup(self, model_id: str) -> None:
        with self._state.hung_up:
            self._state.hangups[model_id] = self._state.hangups.get(model_id, 0) + 1
            self._state.hung_up.notify_all()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeOpenAI

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        path = self.path.split("?", 1)[0].rstrip("/")
        self.fake._log(LoggedRequest(path=path, body=body, headers={k.lower(): v for k, v in self.headers.items()},
                                     started=time.monotonic()))
        if self.fake.api_key and self.headers.get("Authorization") != f"Bearer {self.fake.api_key}":
            self._error(401, "Incorrect API key provided.", "invalid_api_key")
        elif path == "/v1/chat/completions":
            self._chat(body)
        elif path == "/v1/moderations":
            self._moderate(body)
        else:
            self._error(404, f"Unknown path {path}", "not_found")

    # -- chat ---------------------------------------------------------------
    def _chat(self, body: dict[str, Any]) -> None:
        model = str(body.get("model", ""))
        script, turn = self.fake._next_turn(model)
        if script is None:
            self._error(404, f"The model `{model}` does not exist.", "model_not_found")
            return
        status = script.fail_forever or (script.faults[turn] if turn < len(script.faults) else None)
        if status:
            extra = {"Retry-After": script.retry_after} if script.retry_after else {}
            self._error(status, f"Scripted failure {status}.", "scripted", extra)
            return
        if script.respond is not None:
            script = dataclasses.replace(script, chunks=tuple(script.respond(body)))
        prompt_tokens = script.prompt_tokens
        if prompt_tokens is None:
            prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": len(script.chunks) + len(script.reasoning),
                 "total_tokens": prompt_tokens + len(script.chunks) + len(script.reasoning)}
        if body.get("stream"):
            wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            send_usage = script.usage == "always" or (script.usage == "requested" and wants_usage)
            self._stream(model, script, usage if send_usage else None)
        else:
            time.sleep(script.first_token_delay_s + script.chunk_delay_s * len(script.chunks))
            message: dict[str, Any] = {"role": "assistant", "content": "".join(script.chunks)}
            if script.reasoning:
                message[script.reasoning_field] = "".join(script.reasoning)
            payload: dict[str, Any] = {
                "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": script.finish_reason}],
            }
            if script.usage != "never":
                payload["usage"] = usage
            self._json(200, payload)

    def _stream(self, model: str, script: Script, usage: dict[str, int] | None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

        def event(choices: list[dict[str, Any]], **extra: Any) -> None:
            self._chunk(f"data: {json.dumps({**base, 'choices': choices, **extra})}\n\n".encode())

        def delta(**fields: Any) -> list[dict[str, Any]]:
            return [{"index": 0, "delta": fields, "finish_reason": None}]

        try:
            if script.keep_alive_only:
                self._keep_alive(script)
                return
            event(delta(role="assistant", content=""))
            time.sleep(script.first_token_delay_s)
            for piece in script.reasoning:
                event(delta(**{script.reasoning_field: piece}))
                time.sleep(script.chunk_delay_s)
            for index, piece in enumerate(script.chunks):
                if script.cut_after is not None and index >= script.cut_after:
                    self._cut()
                    return
                if index:
                    time.sleep(script.chunk_delay_s)
                event(delta(content=piece))
            if script.cut_after is not None and script.cut_after >= len(script.chunks):
                self._cut()
                return
            event([{"index": 0, "delta": {}, "finish_reason": script.finish_reason}])
            if usage is not None:
                event([], usage=usage)
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")  # the terminating zero-length chunk
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away: nothing more to send
            self.fake._hangup(model)

    def _keep_alive(self, script: Script) -> None:
        """Comments only, as a proxy keeping an idle stream open does; BrokenPipeError once the client leaves."""
        stop_at = time.monotonic() + script.keep_alive_limit_s
        while time.monotonic() < stop_at:
            self._chunk(b": keep-alive\n\n")
            time.sleep(script.keep_alive_every_s)
        self._chunk(b"")

    def _cut(self) -> None:
        """Drop the connection mid-body, as a crashed upstream or a dead proxy would."""
        self.wfile.flush()
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    # -- moderation -----------------------------------------------------------
    def _moderate(self, body: dict[str, Any]) -> None:
        raw = body.get("input", "")
        inputs = raw if isinstance(raw, list) else [raw]
        keyword = self.fake.flag_keyword.lower()
        results = []
        for item in inputs:
            text = item if isinstance(item, str) else json.dumps(item)
            flagged = keyword in text.lower()
            categories = {"harassment": flagged, "hate": False, "self-harm": False, "sexual": False,
                          "violence": False, "illicit": False}
            scores = {name: (0.99 if value else 0.001) for name, value in categories.items()}
            results.append({"flagged": flagged, "categories": categories, "category_scores": scores})
        self._json(200, {"id": "modr-fake", "model": body.get("model") or "omni-moderation-latest",
                         "results": results})

    # -- plumbing -------------------------------------------------------------
    def _error(self, status: int, message: str, code: str, headers: dict[str, str] | None = None) -> None:
        self._json(status, {"error": {"message": message, "type": code, "code": code, "param": None}}, headers)

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def point_catalogue_at(server: FakeOpenAI, path: Path, *, endpoint: str = "openai",
                       helpers: Iterable[str] = ()) -> Path:
    """Write a user catalogue file (SCIARENA_MODELS) that moves ``endpoint`` onto ``server`` and adds
    each of ``helpers`` as a model of that endpoint that never battles (its name is its model id)."""
    doc = {"endpoints": {endpoint: {"base_url": server.base_url}},
           "models": [{"name": name, "provider": endpoint, "model_id": name, "battles": False} for name in helpers]}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


OFFLINE_MODELS = ("Extractive-MMR (offline)", "Per-Paper Digest (offline)", "Claim Clusters (offline)")


def loop_settings(server: FakeOpenAI, folder: Path, models: Iterable[dict[str, Any]], *,
                  generation_timeout_s: float = 30.0) -> Any:
    """Settings for an arena whose pool is ``models`` (catalogue entries of the endpoint "loop", served by
    ``server``; the offline baselines, and so the pipeline over one, switched off), votes under
    ``folder``/data, pairs seeded."""
    from sciarena.core.settings import Settings

    catalogue = folder / "models.json"
    catalogue.write_text(json.dumps({
        "endpoints": {"loop": {"base_url": server.base_url, "key_env": "LOOP_API_KEY"}},
        "models": [*models, *({"name": name, "enabled": False} for name in OFFLINE_MODELS)],
    }), encoding="utf-8")
    settings = Settings.from_env({"LOOP_API_KEY": "sk-test", "SCIARENA_MODELS": str(catalogue)})
    return dataclasses.replace(settings, data_dir=folder / "data", seed=0, generation_timeout_s=generation_timeout_s)
