"""SciArena: `python app.py` serves the arena (offline by default) on http://127.0.0.1:7860."""

import logging
import signal
import sys

from sciarena.core.errors import SciArenaError
from sciarena.core.settings import Settings
from sciarena.ui import build_app, launch_kwargs
from sciarena.wiring import build_services

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Spaces stop containers with SIGTERM; exiting normally lets the Hub sync make its final push.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        services = build_services(Settings.from_env())
    except (SciArenaError, ValueError) as err:  # bad configuration: say what to fix, not a traceback
        sys.exit(f"sciarena: cannot start: {err}")
    logging.getLogger("sciarena").info("built in %.1f s: %d models can battle", services.started_in_s,
                                       len(services.pool.active))
    services.start_background()  # Hub sync, Hub vote refresh, leaderboard cache warmer
    build_app(services).queue(default_concurrency_limit=16).launch(**launch_kwargs(services.settings))
