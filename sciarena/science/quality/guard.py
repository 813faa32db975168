"""The guard: a campaign the filter found is left out only when leaving it out cannot make things worse.

Whatever the detector, it can be wrong: honest votes tested against a reference an attack got into
look like a campaign the other way, and leaving them out then doubles the attack (issue 33). The guard
compares, for every model, three fits (``reference.ridged_fit``, weak prior): every vote; every vote but
the campaign's; and the *clean* reference — the established votes outside the campaign's stretch of
time, without any other campaign's votes. When leaving the campaign out moves some model further from
the clean reference than counting every vote does (by more than ``SLACK`` of the clean rating's standard
deviations), the campaign's votes are counted again and the campaign says so. When a campaign holds
most of its model's votes (``MOST``) it is still left out, but says so: the board shows the model with
a warning, or lists it as hidden, rather than letting it vanish quietly; with fewer than ``MIN_LEFT``
votes left the model could not be rated at all, so those votes are counted again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sciarena.science.quality.reference import ridged_fit

SLACK = 2.0  # standard deviations of the clean rating a campaign's removal may overshoot by (noise)
MOST = 0.5  # a campaign with more than this share of its model's votes is reported loudly
MIN_LEFT = 20  # fewer votes than this left on the model: it cannot be rated without the campaign's votes


@dataclass(frozen=True)
class Verdict:
    """What the guard decided for one campaign."""

    counted_again: bool
    warning: str  # "" when the campaign is left out without a remark


def guard(n_models: int, model: int, votes: np.ndarray, others: np.ndarray, reference: np.ndarray,
          a: np.ndarray, b: np.ndarray, outcome: np.ndarray, pos: np.ndarray, name: str) -> Verdict:
    """The verdict on one campaign: ``votes`` (mask) on ``model``; ``others``: other campaigns' votes;
    ``reference``: the established votes the detector compared with; ``pos``: each vote's time."""
    on_model = (a == model) | (b == model)
    share = votes.sum() / max(int(on_model.sum()), 1)
    left = int((on_model & ~votes & ~others).sum())
    span = (pos >= pos[votes].min()) & (pos <= pos[votes].max())
    clean = reference & ~span & ~others & ~votes
    theta_clean, cov = ridged_fit(n_models, a[clean], b[clean], outcome[clean])
    keep = ~others
    theta_all, _ = ridged_fit(n_models, a[keep], b[keep], outcome[keep])
    keep = ~others & ~votes
    theta_out, _ = ridged_fit(n_models, a[keep], b[keep], outcome[keep])
    overshoot = np.abs(theta_out - theta_clean) - np.abs(theta_all - theta_clean)
    centre = np.eye(n_models) - 1.0 / n_models  # ratings are compared with mean 1000: the free shift is no error
    sd = np.sqrt(np.clip(np.diag(centre @ cov @ centre), 0.0, None))
    worse = overshoot > SLACK * sd
    if worse.any():
        return Verdict(True, f"counted again: leaving these {int(votes.sum()):,} votes out would move "
                       f"{int(worse.sum())} model(s) further from the established voters' ratings than "
                       "counting them does")
    if left < MIN_LEFT:
        return Verdict(True, f"counted again: they are {share:.0%} of {name}'s votes and without them it "
                       "could not be rated")
    if share > MOST:
        return Verdict(False, f"left out: they are {share:.0%} of {name}'s votes")
    return Verdict(False, "")
