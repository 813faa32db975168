"""Launch the real app on loopback for end-to-end and browser tests."""

from __future__ import annotations

import socket
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from sciarena.core.settings import Settings
from sciarena.ui import build_app, launch_kwargs
from sciarena.wiring import Services, build_services


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class RunningArena:
    url: str
    services: Services
    data_dir: Path


@contextmanager
def running_arena(data_dir: Path, services: Services | None = None, *,
                  build: Callable[[Settings], Services] = build_services, **settings: object) -> Iterator[RunningArena]:
    """The app as `python app.py` serves it, on a free loopback port, until the block ends; ``build`` makes
    its services (tests pass conftest's ``wire``: the session's fitted discipline classifier)."""
    if services is None:
        services = build(Settings(data_dir=data_dir, seed=0, **settings))  # type: ignore[arg-type]
    demo = build_app(services).queue(default_concurrency_limit=16)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **launch_kwargs(services.settings))
    try:
        yield RunningArena(url=f"http://127.0.0.1:{port}/", services=services, data_dir=data_dir)
    finally:
        demo.close()
