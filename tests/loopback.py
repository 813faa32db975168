"""The lifecycle every loopback test server shares: a ThreadingHTTPServer on 127.0.0.1
(random port) served from a daemon thread, usable as a context manager."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class LoopbackServer:
    """Subclasses implement ``handler_class()``; ``root_url`` is ``http://127.0.0.1:<port>``."""

    poll_interval_s = 0.05  # shutdown() waits for the next poll, so keep it short

    def handler_class(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def start(self) -> Any:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler_class())
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": self.poll_interval_s},
                                        name=type(self).__name__, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server = getattr(self, "_server", None)
        if server is not None:
            server.shutdown()
            server.server_close()
            self._server = None

    @property
    def root_url(self) -> str:
        server = getattr(self, "_server", None)
        if server is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        host, port = server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
