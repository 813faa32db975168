"""How battles are shared out, in the open: the About tab's table of each model's share of the last 30
days' battles and the sampler's current weights (``Services.sampling_report``, also in the
``/leaderboard`` JSON as "sampling").

Unequal, undisclosed sampling rates skew an arena (Singh et al. 2025, "The Leaderboard Illusion"),
so the rates are published beside the ratings, with the deprecated models named rather than dropped.
"""

from __future__ import annotations

from sciarena.ui.render import escape
from sciarena.wiring import Services

SAMPLER_TEXT = {
    "inverse_sqrt": "each side is drawn with weight 1/√(1 + its battles), so newer models battle more often",
    "uniform": "every pair of available models is equally likely",
    "order": ("pairs are drawn by how much a vote on them would raise the chance that the board's order is "
              "right where readers look: who is first, which models make the top five, and whether neighbours "
              "are in the right order and told apart; a model short of 100 battles also gets a share of the "
              "draws until it is listed, and a share of every draw is spread evenly over all pairs"),
    "adaptive": ("pairs are drawn by how much a vote on them is expected to narrow the intervals that decide the "
                 "shown ranks (neighbours whose intervals overlap, models short of the listing threshold), with "
                 "a share of every draw spread evenly over all pairs"),
}


def sampling_markdown(services: Services, now: float) -> str:
    """The About tab's section: the sampler in words, then the table of shares and weights."""
    report = services.sampling_report(now)
    floor = f" ({report['floor']:.0%} of draws are spread evenly)" if report["floor"] else ""
    lines = ["## How pairs are drawn", "",
             f"Sampler `{report['sampler']}` (`SCIARENA_SAMPLER`): {SAMPLER_TEXT[report['sampler']]}{floor}. "
             "Models in outage are skipped; an OpenScholar-style contestant meets its own base model in at least "
             "half of its battles, and the chances below count those meetings. Shares count a battle for both of its models, so they add up to 200 %.", "",
             f"| Model | Battles, last {report['window_days']} days | Share of those battles | "
             "Chance of being in the next battle |", "|---|---|---|---|"]
    for m in report["models"]:
        name = escape(m["model"]) + (" *(deprecated)*" if m["deprecated"] else "")
        lines.append(f"| {name} | {m['battles_30d']:,} | {m['battle_share_30d']:.1%} | {m['sampling_weight']:.1%} |")
    if not report["models"]:
        lines.append("| — | 0 | — | — |")
    return "\n".join(lines)
