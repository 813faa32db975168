"""Campaign detection: many fresh voter ids pushing one model, seen in aggregate, not voter by voter.

Why aggregate. A rigging campaign (Min et al., ICML 2025, "Improving Your Model Ranking on Chatbot
Arena by Vote Rigging") needs no voter with a history: 300 ids with two votes each are invisible to
every per-voter test, yet move a model by 100+ Elo. What they cannot hide is that, *as a group*, the
votes of new ids treat one model differently from the arena's established voters.

Who is new (the tiers; README "Who is counting"). A vote is *established* when its voter already had
a history when casting it: a signed-in (``hf-``) voter with at least ``SIGNED_IN_HISTORY`` earlier
votes, an anonymous one (browser key or session: ``anon-``) with at least ``ANON_HISTORY`` earlier
votes, the first of them at least ``ANON_AGE_S`` earlier (when times are known). Votes without a
voter id (the released data) are history. Every other vote is *new*.

The tests, per model m (each needs ``MIN_NEW`` new decisive votes on m to be run):

- ``results``: Fisher's exact test on m's wins and losses, new votes against established ones, one
  side for a lift and one for a sink (a campaign can push a rival down: the "omnipresent" attack);
- ``likelihood``: the published filter — the new votes' likelihood under the Bradley–Terry ratings
  fitted on the established votes (the history). Its score test: m's points in new votes minus their
  expectation under those ratings, over the variance of the votes plus that of the fitted ratings
  (their inverse Fisher information), one side each way.

Holm over the 4·M p-values keeps the chance of reporting any campaign in an honest history at
``alpha`` (measured over seeds: benchmarks/bench_rigging.py). Detection is stepwise: the most
significant model is taken, its new votes set aside, and the rest tested again, so that the
opponents a campaign beat are not reported as campaigns of their own.

What is left out: the new votes in battles with a detected model within the campaign's stretch of
time (where their excess over the history's expectation adds up most) — wins and losses alike, so
the model is not biased either way by the choice. Honest newcomers lose their votes on that model
while it is under a campaign (the benchmark measures how many).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
from scipy.stats import fisher_exact, norm

from sciarena.board.bradley_terry import aggregate, fit_counts
from sciarena.votes.schema import OUTCOME_A, OUTCOME_B

SIGNED_IN_PREFIX = "hf-"
SIGNED_IN_HISTORY = 5  # an account is harder to mint than a browser key: less history asked of it
ANON_HISTORY = 20
ANON_AGE_S = 86400.0  # and a day since its first vote: a script cannot age its keys instantly
DRIFT = 0.15  # points per vote an honest stretch loses in the window search (a campaign gains ~0.5)
MIN_NEW = 20  # new decisive votes on a model before it is tested: no test on a handful
RESULTS, LIKELIHOOD = "results", "likelihood"
LIFT, SINK = "lift", "sink"


@dataclass(frozen=True)
class Campaign:
    """One detected campaign: new votes that lift (or sink) ``model``."""

    model: str
    direction: str  # LIFT or SINK
    votes: int  # new votes in battles with the model: left out of the default board
    voter_ids: int  # distinct voters among them
    since: str  # ISO time of the first of them that went the campaign's way ("" when untimed)
    test: str  # the test that fired (RESULTS or LIKELIHOOD)
    p: float  # its Holm-adjusted p-value

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "direction": self.direction, "votes": self.votes,
                "voter_ids": self.voter_ids, "since": self.since, "test": self.test, "p": self.p}


@dataclass(frozen=True, eq=False)
class CampaignCheck:
    """The campaigns found, and which votes (in the caller's order) they leave out."""

    campaigns: tuple[Campaign, ...]
    drop: np.ndarray  # bool per vote
    new: np.ndarray  # bool per vote: cast by a voter without a history (the tested population)
    alpha: float


def new_votes(voters: tuple[str, ...], voter: np.ndarray, times: np.ndarray | None = None) -> np.ndarray:
    """Per vote (in the order cast), whether its voter had no history yet (the module's tiers)."""
    voter = np.asarray(voter, dtype=np.int64)
    n = voter.shape[0]
    known = voter >= 0
    prior = np.zeros(n, dtype=np.int64)
    if known.any():
        order = np.argsort(voter[known], kind="stable")
        codes = voter[known][order]
        starts = np.r_[0, np.flatnonzero(np.diff(codes)) + 1]
        rank = np.arange(codes.size) - np.repeat(starts, np.diff(np.r_[starts, codes.size]))
        placed = np.empty(codes.size, dtype=np.int64)
        placed[order] = rank
        prior[known] = placed
    signed = np.array([v.startswith(SIGNED_IN_PREFIX) for v in voters] + [False], dtype=bool)[voter]
    established = np.where(signed, prior >= SIGNED_IN_HISTORY, prior >= ANON_HISTORY)
    if times is not None:
        t = np.asarray(times, dtype=np.float64)
        first = np.full(len(voters) + 1, np.inf)
        np.minimum.at(first, np.where(known, voter, len(voters)), np.where(np.isnan(t), np.inf, t))
        age = t - first[voter]
        old_enough = signed | np.isnan(t) | ~np.isfinite(first[voter]) | (age >= ANON_AGE_S)
        established &= old_enough
    return known & ~established


def _holm(p: np.ndarray) -> np.ndarray:
    order = np.argsort(p, kind="stable")
    ranked = np.minimum(1.0, np.maximum.accumulate(p[order] * (p.size - np.arange(p.size))))
    out = np.empty_like(p)
    out[order] = ranked
    return out


def _score_for(model: int, a: np.ndarray, b: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    """Points of ``model`` in each vote (1 win, 0 loss, ½ tie or both bad)."""
    won = np.where(a == model, outcome == OUTCOME_A, outcome == OUTCOME_B)
    lost = np.where(a == model, outcome == OUTCOME_B, outcome == OUTCOME_A)
    return np.where(won, 1.0, np.where(lost, 0.0, 0.5))


def _history_fit(n_models: int, a: np.ndarray, b: np.ndarray, outcome: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """θ of the established votes and the pseudo-inverse of its Fisher information (the ratings' covariance)."""
    counts = aggregate(a, b, outcome, n_models)
    theta, _ = fit_counts(counts)
    _, battles = counts.totals()
    i, j, n = counts.pair_i, counts.pair_j, battles[0]
    mu = 1.0 / (1.0 + np.exp(theta[j] - theta[i]))
    w = n * mu * (1.0 - mu)
    info = np.zeros((n_models, n_models))
    np.add.at(info, (i, j), -w)
    np.add.at(info, (j, i), -w)
    np.add.at(info, (i, i), w)
    np.add.at(info, (j, j), w)
    return theta, np.linalg.pinv(info)


def _pvalues(n_models: int, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, new: np.ndarray,
             established: np.ndarray, theta: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """(M, 4) raw p-values: results lift, results sink, likelihood lift, likelihood sink, of the ``new``
    votes still tested against the ``established`` ones (never against votes already set aside: a
    campaign's votes counted as history would make its accomplices' honest votes look like a sink)."""
    p = np.ones((n_models, 4))
    decisive = (outcome == OUTCOME_A) | (outcome == OUTCOME_B)
    for m in range(n_models):
        involved = (a == m) | (b == m)
        s = _score_for(m, a, b, outcome)
        fresh, old = involved & new & decisive, involved & established & decisive
        if fresh.sum() < MIN_NEW:
            continue
        table = [[int((s[fresh] == 1).sum()), int((s[fresh] == 0).sum())],
                 [int((s[old] == 1).sum()), int((s[old] == 0).sum())]]
        p[m, 0] = fisher_exact(table, alternative="greater")[1]
        p[m, 1] = fisher_exact(table, alternative="less")[1]
        rows = involved & new
        opp = np.where(a[rows] == m, b[rows], a[rows])
        mu = 1.0 / (1.0 + np.exp(theta[opp] - theta[m]))
        u = float((s[rows] - mu).sum())
        grad = np.zeros(n_models)
        slope = mu * (1.0 - mu)
        grad[m] = slope.sum()
        np.subtract.at(grad, opp, slope)
        var = float((mu * (1.0 - mu)).sum() + grad @ cov @ grad)
        z = u / np.sqrt(var) if var > 0 else 0.0
        p[m, 2], p[m, 3] = norm.sf(z), norm.cdf(z)
    return p


def _window(m: int, direction: str, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, tested: np.ndarray,
            theta: np.ndarray) -> np.ndarray:
    """The campaign's votes: the new votes on ``m`` in the stretch of time where their excess over the
    history's expectation (in ``direction``) adds up most (the maximum-sum run, Kadane). Every new vote
    on m inside it is taken, whichever way it went, so that m's rating is not biased by the choice."""
    rows = np.flatnonzero(((a == m) | (b == m)) & tested)
    opp = np.where(a[rows] == m, b[rows], a[rows])
    excess = _score_for(m, a[rows], b[rows], outcome[rows]) - 1.0 / (1.0 + np.exp(theta[opp] - theta[m]))
    if direction == SINK:
        excess = -excess
    excess -= DRIFT  # CUSUM's reference value: honest stretches drift down, so the run starts where the campaign does
    best, start, best_span, run = -np.inf, 0, (0, rows.size), 0.0
    for i, x in enumerate(excess.tolist()):
        if run <= 0.0:
            run, start = x, i
        else:
            run += x
        if run > best:
            best, best_span = run, (start, i + 1)
    chosen = np.zeros(a.shape[0], dtype=bool)
    chosen[rows[best_span[0]:best_span[1]]] = True
    return chosen


def _iso(t: float) -> str:
    if not np.isfinite(t):
        return ""
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def detect_campaigns(models: tuple[str, ...], voters: tuple[str, ...], voter: np.ndarray, a: np.ndarray,
                     b: np.ndarray, outcome: np.ndarray, times: np.ndarray | None = None, *,
                     alpha: float = 0.05) -> CampaignCheck:
    """Campaigns among votes given in the order cast (``times``: epoch seconds, NaN unknown)."""
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    outcome, voter = np.asarray(outcome, dtype=np.int64), np.asarray(voter, dtype=np.int64)
    n, n_models = a.shape[0], len(models)
    new = new_votes(voters, voter, times)
    drop = np.zeros(n, dtype=bool)
    found: list[Campaign] = []
    if not new.any() or new.all():
        return CampaignCheck((), drop, new, alpha)
    old = ~new
    theta, cov = _history_fit(n_models, a[old], b[old], outcome[old])
    t = np.full(n, np.nan) if times is None else np.asarray(times, dtype=np.float64)
    tested = new.copy()
    taken = np.zeros(n_models, dtype=bool)  # one campaign per model: the rest of its new votes count
    for _ in range(n_models):
        raw = _pvalues(n_models, a, b, outcome, tested, old, theta, cov)
        raw[taken] = 1.0
        adjusted = _holm(raw.ravel()).reshape(raw.shape)
        best = int(np.argmin(adjusted))
        m, column = divmod(best, 4)
        if adjusted[m, column] > alpha:
            break
        direction = LIFT if column in (0, 2) else SINK
        involved = _window(m, direction, a, b, outcome, tested, theta)
        s = _score_for(m, a, b, outcome)
        way = involved & ((s == 1) if direction == LIFT else (s == 0))
        first = float(np.nanmin(t[way])) if way.any() and np.isfinite(t[way]).any() else float("nan")
        found.append(Campaign(models[m], direction, int(involved.sum()), int(np.unique(voter[involved]).size),
                              _iso(first), RESULTS if column < 2 else LIKELIHOOD, float(adjusted[m, column])))
        drop |= involved
        tested &= ~involved
        taken[m] = True
    return CampaignCheck(tuple(found), drop, new, alpha)
