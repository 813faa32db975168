"""How battles are shared out, in the open: each model's share of the last 30 days' battles and the
sampler's current weights, for the About tab and the ``/leaderboard`` JSON ("sampling").

Unequal, undisclosed sampling rates skew an arena (Singh et al. 2025, "The Leaderboard Illusion"),
so the rates are published beside the ratings, with the deprecated models named rather than dropped.
"""

from __future__ import annotations

import logging
from typing import Any

from sciarena.board import load_votes
from sciarena.board.sampler_state import SHARE_WINDOW_DAYS, battle_shares
from sciarena.core.errors import SciArenaError
from sciarena.ui.render import escape
from sciarena.wiring import Services

log = logging.getLogger(__name__)

SAMPLER_TEXT = {
    "inverse_sqrt": "each side is drawn with weight 1/√(1 + its battles), so newer models battle more often",
    "uniform": "every pair of available models is equally likely",
    "adaptive": ("pairs are drawn by how much a vote on them is expected to narrow the intervals that decide the "
                 "shown ranks (neighbours whose intervals overlap, models short of the listing threshold), with "
                 "a share of every draw spread evenly over all pairs"),
}


def sampling_report(services: Services, now: float) -> dict[str, Any]:
    """JSON-ready: the sampler, its floor, and per model the window's battles, share and current weight."""
    settings = services.settings
    shares: dict[str, tuple[int, float]] = {}
    files = services.votes.files(refresh=False)
    if files:
        try:
            table = load_votes(files, strict=False)
            shares = {s.model: (s.battles, s.share) for s in battle_shares(table, now)}
        except SciArenaError as err:  # unreadable votes: the weights are still worth showing
            log.info("no battle shares: %s", err)
    weights = services.arena.sampling_weights()
    deprecated = services.pool.deprecated
    names = list(dict.fromkeys([*weights, *shares]))
    models = [{"model": name, "battles_30d": shares.get(name, (0, 0.0))[0],
               "battle_share_30d": round(shares.get(name, (0, 0.0))[1], 4),
               "sampling_weight": round(weights.get(name, 0.0), 4), "deprecated": name in deprecated}
              for name in names]
    models.sort(key=lambda m: (-m["sampling_weight"], -m["battles_30d"], m["model"]))
    return {"sampler": settings.sampler, "floor": settings.sampler_floor if settings.sampler == "adaptive" else None,
            "window_days": SHARE_WINDOW_DAYS, "models": models, "deprecated_models": sorted(deprecated),
            "note": ("battle_share_30d and sampling_weight count each battle for both its models (they sum to "
                     "2); a pipeline meets its own base model in about half of its battles on top of the weights")}


def sampling_markdown(services: Services, now: float) -> str:
    """The About tab's section: the sampler in words, then the table of shares and weights."""
    report = sampling_report(services, now)
    floor = f" ({report['floor']:.0%} of draws are spread evenly)" if report["floor"] else ""
    lines = ["## How pairs are drawn", "",
             f"Sampler `{report['sampler']}` (`SCIARENA_SAMPLER`): {SAMPLER_TEXT[report['sampler']]}{floor}. "
             "Models in outage are skipped; an OpenScholar-style contestant meets its own base model in about "
             "half of its battles. Shares count a battle for both of its models, so they add up to 200 %.", "",
             f"| Model | Battles, last {report['window_days']} days | Share of those battles | "
             "Chance of being in the next battle |", "|---|---|---|---|"]
    for m in report["models"]:
        name = escape(m["model"]) + (" *(deprecated)*" if m["deprecated"] else "")
        lines.append(f"| {name} | {m['battles_30d']:,} | {m['battle_share_30d']:.1%} | {m['sampling_weight']:.1%} |")
    if not report["models"]:
        lines.append("| — | 0 | — | — |")
    return "\n".join(lines)
