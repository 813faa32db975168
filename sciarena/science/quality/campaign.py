"""Campaign detection: many voter ids pushing one model, seen in aggregate, not voter by voter.

Why aggregate. A rigging campaign (Min et al., ICML 2025, "Improving Your Model Ranking on Chatbot
Arena by Vote Rigging") needs no voter with a history: 300 ids with two votes each are invisible to
every per-voter test, yet move a model by 100+ Elo. What they cannot hide is that, *as a group*, the
votes of new ids treat one model differently from the arena's established voters.

Who is new (the tiers; README "Who is counting"). A vote is *established* when its voter already had
a history when casting it: a signed-in (``hf-``) voter with at least ``SIGNED_IN_HISTORY`` earlier
votes, an anonymous one (browser key or session: ``anon-``) with at least ``ANON_HISTORY`` earlier
votes, the first of them at least ``ANON_AGE_S`` earlier (when times are known). Votes without a
voter id (the released data) are history. Every other vote is *new*.

The test, per cohort (votes of new ids; votes of established ids), per model m and per stretch of time
(the published filter, Min et al.: the votes' likelihood under Bradley–Terry ratings fitted on other
votes): m's points in the cohort's votes within a window minus their expectation under the ratings of
the established votes *outside that window*, over the variance of the votes plus that of those ratings
(their inverse Fisher information under a weak prior: ``reference``), one side for a lift and one for
a sink (a campaign can push rivals down: the "omnipresent" attack). Leaving the window out keeps a
campaign out of its own reference: ids that aged with honest votes and then vote for a target are
established, so with an all-time reference their votes would lift the target there and make honest
newcomers' votes on it look like a sink campaign (the filter would double the attack). Established ids
are tested too, for the same reason. The windows are 1, 2, 4 … days long (``WINDOW_S``; counted in
votes when untimed), stepping back from the last vote by half their length, so a campaign is compared
with the few honest votes of its own days rather than diluted by months of them; a window is tested
when it holds ``MIN_NEW`` decisive cohort votes on m and leaves at least ``REFERENCE_SHARE`` of the
reference outside it (a young arena, with established votes under ``MIN_REFERENCE`` battles per model,
uses every vote outside the window as its reference). Bonferroni over every (cohort, model, window, side) tested — Holm's first step
— keeps the chance of reporting any campaign in an honest history at ``alpha`` (measured over seeds:
benchmarks/bench_rigging.py, benchmarks/bench_campaigns.py). Detection is stepwise: the most significant window
is taken, its votes set aside (out of the reference too), and the rest tested again, so that the
opponents a campaign beat are not reported as campaigns of their own. Before it is taken, a window of
the other side on the same model is tried as its explanation (``_explains``): a campaign in one stretch
still sits in the reference of every other stretch, and when setting it aside makes the first window
ordinary, it is the campaign.

What is left out: the new votes on the detected model in its window, wins and losses alike, so the
model is not biased either way by the choice — and when the campaign picked its battles (opponents
it met there far more often than in the history: a binomial test on the counts alone), only those
battles, after which the rest of the window is tested again. Honest newcomers lose their votes on
that model in those days (the benchmark measures how many); their other votes count from the first.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
from scipy.stats import binom, norm

from sciarena.science.quality.guard import guard
from sciarena.science.quality.reference import References, leave_window_out
from sciarena.votes.schema import OUTCOME_A, OUTCOME_B
from sciarena.votes.voter import SIGNED_IN_PREFIX

SIGNED_IN_HISTORY = 5  # an account is harder to mint than a browser key: less history asked of it
ANON_HISTORY = 20
ANON_AGE_S = 86400.0  # and a day since its first vote: a script cannot age its keys instantly
WINDOW_S = 86400.0  # the shortest window the likelihood test scans: a day (then 2, 4, 8, ... days)
WINDOW_VOTES = 250  # the same when votes are untimed, counted in votes
CONCENTRATION = 0.01  # the opponents a campaign picked: binomial p ≤ this over the number of models
KEEN = 0.01  # an id whose votes are on one model more often than this chance allows: it picked that model
MIN_NEW = 20  # new decisive votes on a model before it is tested: no test on a handful
# Reference battles a model needs before its votes are tested: with fewer, its reference rating rests on a
# handful of votes, the linearised variance is far too small (a small arena of casual voters: 4 of 10
# honest seeds reported a campaign) and the weak prior alone does not make up for it.
MIN_REFERENCE = 50
REFERENCE_SHARE = 0.25  # a window is tested only when it leaves a quarter of the reference votes outside it
COHORTS = ("new", "established")
LIKELIHOOD = "likelihood"
LIFT, SINK = "lift", "sink"


@dataclass(frozen=True)
class Campaign:
    """One detected campaign: new votes that lift (or sink) ``model``."""

    model: str
    direction: str  # LIFT or SINK
    cohort: str  # whose votes: "new" ids or "established" ones (e.g. ids aged with honest votes first)
    votes: int  # new votes in battles with the model: left out of the default board
    voter_ids: int  # distinct voters among them
    since: str  # ISO time of the first of them that went the campaign's way ("" when untimed)
    until: str  # ISO time of the last of them
    test: str  # the test that fired (LIKELIHOOD: the windowed score test)
    p: float  # its Holm-adjusted p-value
    counted_again: bool = False  # the guard found leaving it out would make the board worse (guard.py)
    warning: str = ""  # the guard's remark, said on the board ("" none)

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "direction": self.direction, "cohort": self.cohort, "votes": self.votes,
                "voter_ids": self.voter_ids, "since": self.since, "until": self.until, "test": self.test, "p": self.p,
                "counted_again": self.counted_again, "warning": self.warning}


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


def _battle_shares(n_models: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each model's share of battles with each opponent among the votes (add-one smoothed; rows sum to 1)."""
    met = np.zeros((n_models, n_models))
    np.add.at(met, (a, b), 1.0)
    met += met.T
    share = (met + 1.0) / (met.sum(axis=1, keepdims=True) + n_models - 1)
    np.fill_diagonal(share, 0.0)
    return share


def _spans(pos: np.ndarray, shortest: float) -> tuple[np.ndarray, np.ndarray]:
    """The windows (start, stop] the likelihood test scans: lengths ``shortest``·2^k up to the whole span,
    each tiling time backwards from the last vote at half-length steps, so that any stretch lies in a
    window at most four times its length (and a stretch ending now, in one at most twice)."""
    first, last = float(pos.min()), float(pos.max())
    starts, stops = [], []
    width = shortest
    while True:
        if width >= last - first:
            starts.append(first - 1.0)
            stops.append(last)
            break
        stop = last - np.arange(0.0, last - first + width / 2, width / 2)
        stop = stop[stop > first]
        starts.extend(stop - width)
        stops.extend(stop)
        width *= 2.0
    return np.asarray(starts), np.asarray(stops)


def _scan(m: int, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, tested: np.ndarray, pos: np.ndarray,
          starts: np.ndarray, stops: np.ndarray, refs: References
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The likelihood test of m's tested votes in every window holding ``MIN_NEW`` decisive ones:
    (rows of m's tested votes, window bounds lo/hi into those rows, z and the skew of m's wins per window). z is m's points minus
    their expectation under the ratings fitted without the window, over the variance of the votes plus
    that of those ratings (the gradient through their covariance, the inverse Fisher information)."""
    rows = np.flatnonzero(((a == m) | (b == m)) & tested)
    empty = np.zeros(0, dtype=np.int64)
    if rows.size < MIN_NEW:
        return rows, empty, empty, np.zeros(0), np.zeros(0)
    opp = np.where(a[rows] == m, b[rows], a[rows])
    s = _score_for(m, a[rows], b[rows], outcome[rows])
    decisive = np.r_[0, np.cumsum((outcome[rows] == OUTCOME_A) | (outcome[rows] == OUTCOME_B))]
    lo = np.searchsorted(pos[rows], starts, side="right")
    hi = np.searchsorted(pos[rows], stops, side="right")
    keep = (decisive[hi] - decisive[lo] >= MIN_NEW) & refs.usable & (refs.battles[:, m] >= MIN_REFERENCE)
    if not keep.any():
        return rows, empty, empty, np.zeros(0), np.zeros(0)
    # the same votes are one test (against the reference of the shortest window holding them)
    _, first = np.unique(np.stack([lo[keep], hi[keep]], axis=1), axis=0, return_index=True)
    window = np.flatnonzero(keep)[np.sort(first)]
    lo, hi = lo[window], hi[window]
    n_models = refs.theta.shape[1]
    met = np.zeros((rows.size + 1, n_models))
    met[np.arange(1, rows.size + 1), opp] = 1.0
    met = np.cumsum(met, axis=0)
    n = met[hi] - met[lo]  # (windows, opponents): m's tested battles against each in the window
    theta = refs.theta[window]
    mu = 1.0 / (1.0 + np.exp(theta - theta[:, [m]]))  # P(m beats o) under each window's reference
    slope = n * mu * (1.0 - mu)
    u = np.r_[0.0, np.cumsum(s)]
    g = -slope
    g[:, m] = slope.sum(axis=1)
    var = slope.sum(axis=1) + np.einsum("wi,wij,wj->w", g, refs.cov[window], g)
    var = np.maximum(var, 1e-12)
    z = (u[hi] - u[lo] - (n * mu).sum(axis=1)) / np.sqrt(var)
    skew = (slope * (1.0 - 2.0 * mu)).sum(axis=1) / var ** 1.5  # third cumulant of m's wins / sd³
    return rows, lo, hi, z, skew


def _tails(z: np.ndarray, skew: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lift, sink) p-values of z: the normal tails, or their one-term Edgeworth correction for the
    skew of a sum of wins when that is larger. A weak model's wins are right-skewed (few expected, a
    run of them is likelier than the normal says), a strong model's losses left-skewed; the normal tail
    alone reported false campaigns on such models in honest histories of casual voters."""
    term = norm.pdf(z) * skew / 6.0 * (z * z - 1.0)
    return np.maximum(norm.sf(z), norm.sf(z) + term), np.maximum(norm.cdf(z), norm.cdf(z) - term)


def _candidates(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, tested: list[np.ndarray] | tuple[np.ndarray, ...],
                taken: np.ndarray, pos: np.ndarray, starts: np.ndarray, stops: np.ndarray, refs: References
                ) -> tuple[list[tuple[float, float, int, str, int, np.ndarray]], int]:
    """Per (cohort, model not taken, side): its most significant window as (p, z, model, side, cohort,
    its votes); and the number of tests run."""
    n_tests = 0
    candidates: list[tuple[float, float, int, str, int, np.ndarray]] = []
    for c, mask in enumerate(tested):
        for m in np.flatnonzero(~taken[c]).tolist():
            rows, lo, hi, z, skew = _scan(m, a, b, outcome, mask, pos, starts, stops, refs)
            n_tests += 2 * z.size
            for direction, p in zip((LIFT, SINK), _tails(z, skew)):
                if z.size:
                    k = int(np.argmin(p))
                    candidates.append((float(p[k]), float(z[k]), m, direction, c, rows[lo[k]:hi[k]]))
    return candidates, n_tests


def _picked(m: int, chosen: np.ndarray, every: np.ndarray, a: np.ndarray, b: np.ndarray, voter: np.ndarray,
            fresh: np.ndarray, share: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """The part of a window's votes on m that the campaign picked, decided by counts alone, never by
    outcomes (so the honest votes that share it go wins and losses alike): first the votes against the
    opponents m meets there far more often than in the history (a campaign that picks its battles:
    omnipresent); else, among ``every`` new vote on m still tested, those of the ``fresh`` ids (never
    established) whose votes are on m far more often than m's share of the history's battles, when
    some voted in the window (a campaign of ids that vote on m only: target-only, slow — found in its
    busiest days, taken wherever its ids voted; an honest id is that keen on one model about once in
    300 two-vote visits); else all of
    ``chosen`` (a campaign that hides its votes among honest ones: mixed). A binomial test each: at
    ``CONCENTRATION`` over the models for the opponents, at ``KEEN`` per id (two votes of two on m
    already stand out: p ≈ 0.003 for a model in 1 battle of 19; one vote never does)."""
    opp = np.where(a[chosen] == m, b[chosen], a[chosen])
    counts = np.bincount(opp, minlength=share.shape[1])
    level = CONCENTRATION / share.shape[1]
    over = (binom.sf(counts - 1, chosen.size, share[m]) <= level) & (counts > 0)
    if over.any():
        return chosen[over[opp]]
    on_m = np.bincount(voter[((a == m) | (b == m)) & (voter >= 0)], minlength=int(voter.max()) + 1)
    cast = np.bincount(voter[voter >= 0], minlength=int(voter.max()) + 1)
    keen = np.flatnonzero((binom.sf(on_m - 1, cast, rate[m]) <= KEEN) & fresh)
    if not np.isin(voter[chosen], keen).any():
        return chosen
    return every[np.isin(voter[every], keen)]


def _explains(n_models: int, m: int, direction: str, chosen: np.ndarray, significant: list, a: np.ndarray, b: np.ndarray,
              outcome: np.ndarray, tested: np.ndarray, reference: np.ndarray, pos: np.ndarray, starts: np.ndarray,
              stops: np.ndarray, n_tests: int, alpha: float) -> tuple | None:
    """The other side's campaign on m that explains this one, if any. Votes that lift m in one stretch
    lift it in the reference of every other stretch, so m's honest votes there look like a sink (and the
    other way round). When a significant window of the opposite side on m is made of reference votes and,
    with them out of the reference, ``chosen``'s window is no longer significant, that window is the
    campaign."""
    rivals = sorted((x for x in significant if x[2] == m and x[3] != direction and reference[x[5]].any()
                     and not np.isin(x[5], chosen).any()), key=lambda x: x[0])
    if not rivals:
        return None
    rival = rivals[0]
    without = reference.copy()
    without[rival[5]] = False
    lo_t, hi_t = pos[chosen].min(), pos[chosen].max()
    window = np.flatnonzero((starts < lo_t) & (stops >= hi_t))  # the windows holding the chosen votes
    window = window[np.argsort(stops[window] - starts[window])][:1]
    refs = leave_window_out(n_models, a, b, outcome, pos, without, starts[window], stops[window], REFERENCE_SHARE)
    _, _, _, z, skew = _scan(m, a, b, outcome, tested, pos, starts[window], stops[window], refs)
    if z.size == 0:
        return rival
    lift, sink = _tails(z, skew)
    p = float(lift.min() if direction == LIFT else sink.min())
    return rival if p * n_tests > alpha else None


def _record(model: str, direction: str, cohort: str, votes: np.ndarray, p: float, m: int, a: np.ndarray, b: np.ndarray,
            outcome: np.ndarray, voter: np.ndarray, t: np.ndarray) -> Campaign:
    """The report of one campaign: its votes (a mask), ids, first vote its way, last vote, p."""
    s = _score_for(m, a, b, outcome)
    way = votes & ((s == 1) if direction == LIFT else (s == 0)) & np.isfinite(t)
    timed = votes & np.isfinite(t)
    first = float(t[way].min()) if way.any() else float("nan")
    last = float(t[timed].max()) if timed.any() else float("nan")
    return Campaign(model, direction, cohort, int(votes.sum()), int(np.unique(voter[votes]).size), _iso(first),
                    _iso(last), LIKELIHOOD, p)


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
    old = ~new
    if not (voter >= 0).any():
        return CampaignCheck((), drop, new, alpha)
    # A young arena (established votes under MIN_REFERENCE battles per model): every vote outside a
    # window is its reference, so a campaign on a fresh arena is still seen against the other days.
    base = old if 2.0 * old.sum() >= MIN_REFERENCE * n_models else np.ones(n, dtype=bool)
    share = _battle_shares(n_models, a[base], b[base])
    fresh = np.bincount(voter[old & (voter >= 0)], minlength=max(int(voter.max()) + 1, 0)) == 0  # never established
    rate = (np.bincount(a[base], minlength=n_models) + np.bincount(b[base], minlength=n_models) + 1.0) / (
        base.sum() + n_models)  # the share of the history's battles each model plays in
    t = np.full(n, np.nan) if times is None else np.asarray(times, dtype=np.float64)
    timed = bool(np.isfinite(t).all())
    pos = t if timed else np.arange(n, dtype=np.float64)  # untimed: windows counted in votes
    cohorts = (new, old & (voter >= 0))  # new ids, and established ones: each tested against the rest's past
    scanned = new if new.any() else cohorts[1]
    starts, stops = _spans(pos[scanned], WINDOW_S if timed else float(WINDOW_VOTES))
    tested = [c.copy() for c in cohorts]
    reference = base.copy()  # established votes (or, young, all votes) not set aside
    refs = leave_window_out(n_models, a, b, outcome, pos, reference, starts, stops, REFERENCE_SHARE)
    taken = np.zeros((len(cohorts), n_models), dtype=bool)  # a window taken whole: the rest of m's votes count
    pieces: dict[tuple[int, str, int], tuple[np.ndarray, float]] = {}  # (model, direction, cohort) → (votes, p)
    for _ in range(2 * n_models * len(cohorts)):
        candidates, n_tests = _candidates(a, b, outcome, tested, taken, pos, starts, stops, refs)
        significant = [x for x in candidates if x[0] * n_tests <= alpha]  # Holm's first step
        if not significant:
            break
        p_best, _, m, direction, c, chosen = min(significant, key=lambda x: x[0])
        rival = _explains(n_models, m, direction, chosen, significant, a, b, outcome, tested[c], reference, pos, starts,
                          stops, n_tests, alpha)
        if rival is not None:
            p_best, _, m, direction, c, chosen = rival
        adjusted = min(1.0, p_best * n_tests)
        every = np.flatnonzero(((a == m) | (b == m)) & tested[c])
        part = _picked(m, chosen, every, a, b, voter, fresh, share, rate)
        votes, p_first = pieces.get((m, direction, c), (np.zeros(n, dtype=bool), adjusted))
        votes[part] = True  # a campaign found in parts (picked battles first) is one campaign
        pieces[(m, direction, c)] = (votes, min(p_first, adjusted))
        tested[c][part] = False
        taken[c, m] = np.isin(chosen, part).all()  # after a picked part, the rest of m's window is tested again
        if reference[part].any():  # established votes set aside: the reference changes
            reference[part] = False
            refs = leave_window_out(n_models, a, b, outcome, pos, reference, starts, stops, REFERENCE_SHARE)
    found = []
    every_piece = np.zeros(n, dtype=bool)
    for votes, _ in pieces.values():
        every_piece |= votes
    for (m, direction, c), (votes, p) in pieces.items():
        others = every_piece & ~votes
        verdict = guard(n_models, m, votes, others, base, a, b, outcome, pos, models[m])
        found.append(dataclasses.replace(_record(models[m], direction, COHORTS[c], votes, p, m, a, b, outcome,
                                                 voter, t), counted_again=verdict.counted_again,
                                         warning=verdict.warning))
        if not verdict.counted_again:
            drop |= votes
    return CampaignCheck(tuple(found), drop, new, alpha)
