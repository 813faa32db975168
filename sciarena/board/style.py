"""Style control: Bradley–Terry with per-battle style features (paper §3.3, §5.2).

For each chosen feature f the vote gets Z_f = (f_a − f_b)/(f_a + f_b + 1), z-scored
over the votes used; the model is P(a beats b) = σ(θ_a − θ_b + Zγ). γ measures how
much voters reward the feature itself; θ are the ratings with that effect removed.

The objective is the released SciArena/FastChat one: the summed cross-entropy with
ties and "both bad" as outcome 0.5, plus (reg/2)·(‖r‖² + ‖γ‖²) with reg = 0.5, where
r = θ/ln 10 are the ratings in the code's units (so θ itself gets reg/ln²10). The
penalty on ratings also pins their free shift (mean θ = 0, mean rating 1000).
Bootstrap: votes resampled with replacement (seeded), features kept as standardised
on the full data, like the released code.

Three procedures choose the votes and the fits (docs/leaderboard.md):
- "ours" fits every vote carrying the features, ties and "both bad" as half a win, all features jointly;
- "paper" follows the authors' released script (scripts/bias_analysis/preference_calculate.py in
  yale-nlp/SciArena): decisive votes (A or B) in which both answers cite at least once, and one fit
  per feature — supporting and irrelevant together, as that script pairs them, every other feature alone;
- "paper-sample" follows the paper's text (appendix C.2): decisive votes, a seeded sample of
  PAPER_SAMPLE of them when there are more, all features jointly.
The model, feature definition, penalty and solver are the same for all three.

Vector·vector products avoid BLAS (``np.dot`` of two long vectors): OpenBLAS threads
them, and on a busy machine that made them 15× slower in measurements; the
matrix-vector products used here did not suffer.

Solver: damped Newton (step halving on the penalised loss). Sums the rating block
needs are taken per model pair with bincount, so an iteration is a few passes over
the votes; each bootstrap round fits only the votes it drew (about 63% of them, with
their multiplicities) and starts from the point fit, so it converges in 2–4 steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sciarena.board.table import VoteTable
from sciarena.core.errors import LeaderboardInputError
from sciarena.votes.schema import OUTCOME_A, OUTCOME_B, score_of_a

STYLE_FEATURES: tuple[str, ...] = ("length", "citations", "supporting", "irrelevant")
STYLE_L2 = 0.5
STYLE_PROCEDURES: tuple[str, ...] = ("ours", "paper", "paper-sample")
# The features the released script fits in one model; any other feature is fitted on its own.
PAPER_JOINT: tuple[str, ...] = ("supporting", "irrelevant")
PAPER_SAMPLE = 3000  # votes in the authors' style analysis (paper appendix C.2)
_TOL = 1e-5  # nats; the error left after a Newton step this small is ~1e-10
_MAX_ITER = 60


@dataclass(frozen=True, eq=False)
class StyleResult:
    """Point and bootstrap estimates; θ covers ``models`` (indices into table.models)."""

    features: tuple[str, ...]
    models: np.ndarray
    theta: np.ndarray  # (Mp,)
    gamma: np.ndarray  # (S,)
    boot_theta: np.ndarray  # (R, Mp)
    boot_gamma: np.ndarray  # (R, S)
    n_used: int
    n_excluded: int  # votes lacking a chosen feature
    procedure: str = "ours"
    n_undecided: int = 0  # ties and "both bad" left out ("paper", "paper-sample")
    n_unsampled: int = 0  # decisive votes beyond the seeded sample ("paper-sample")
    n_uncited: int = 0  # decisive votes in which an answer cites nothing, or its count is unknown ("paper")


def paper_groups(features: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The separate fits the released script makes for ``features``, in the order given:
    supporting and irrelevant share one fit, every other feature has its own."""
    groups: list[tuple[str, ...]] = []
    for f in features:
        group = tuple(g for g in PAPER_JOINT if g in features) if f in PAPER_JOINT else (f,)
        if group not in groups:
            groups.append(group)
    return tuple(groups)


def released_votes(table: VoteTable, mask: np.ndarray) -> tuple[np.ndarray, int, int]:
    """The votes of ``mask`` the released script keeps: decisive, and both answers cite at least
    once. Returns (mask, ties and both-bad dropped, decisive votes dropped for citations)."""
    decisive = mask & ((table.outcome == OUTCOME_A) | (table.outcome == OUTCOME_B))
    counts = table.features["citations"]
    cited = (counts > 0).all(axis=1)  # NaN (unknown count) compares False: not known to cite
    keep = decisive & cited
    return keep, int(mask.sum() - decisive.sum()), int((decisive & ~cited).sum())


def paper_votes(table: VoteTable, mask: np.ndarray, seed: int) -> tuple[np.ndarray, int, int]:
    """The votes of ``mask`` the authors' procedure fits: decisive ones, then a sample of PAPER_SAMPLE
    drawn with ``seed`` when there are more. Returns (mask, ties and both-bad dropped, not sampled)."""
    decisive = mask & ((table.outcome == OUTCOME_A) | (table.outcome == OUTCOME_B))
    chosen = np.flatnonzero(decisive)
    undecided, unsampled = int(mask.sum() - chosen.size), max(0, int(chosen.size) - PAPER_SAMPLE)
    if unsampled:
        # Its own stream, so the sample does not depend on how many bootstrap rounds follow.
        chosen = np.random.default_rng([seed, PAPER_SAMPLE]).choice(chosen, PAPER_SAMPLE, replace=False)
    keep = np.zeros_like(mask)
    keep[chosen] = True
    return keep, undecided, unsampled


def style_matrix(table: VoteTable, features: tuple[str, ...],
                 within: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(Z (n_used, S) z-scored, mask of votes used) for the chosen features; ``within`` (a mask)
    narrows the votes used before the features are standardised."""
    unknown = [f for f in features if f not in STYLE_FEATURES]
    if unknown or not features:
        raise LeaderboardInputError(
            f"unknown style feature(s) {', '.join(unknown) or '(none)'}; "
            f"choose from {', '.join(STYLE_FEATURES)}")
    pairs = [table.features[f].astype(np.float64) for f in features]
    mask = np.ones(table.n_votes, dtype=bool)
    for f, values in zip(features, pairs):
        has = np.isfinite(values).all(axis=1)
        if not has.any():
            raise LeaderboardInputError(f"no vote carries the style feature {f!r}")
        mask &= has
    if within is not None:
        mask &= within
    if mask.sum() < 2:
        raise LeaderboardInputError("too few votes carry all the chosen style features")
    columns = []
    for f, values in zip(features, pairs):
        fa, fb = values[mask, 0], values[mask, 1]
        diff = (fa - fb) / (fa + fb + 1.0)
        std = diff.std()
        if not std > 0:
            raise LeaderboardInputError(f"style feature {f!r} does not vary between the answers")
        columns.append((diff - diff.mean()) / std)
    return np.column_stack(columns), mask


def _newton(key: np.ndarray, zt: np.ndarray, y: np.ndarray, c: np.ndarray, m: int,
            params: np.ndarray, reg: float, zmax: np.ndarray) -> np.ndarray:
    """Damped Newton for one (re)sample; returns the parameters (θ then γ).

    key = a·m + b per vote; zt (S, n) holds the features by row; c are vote counts;
    zmax bounds |z| per feature. Sums the rating block needs are taken per ordered
    pair with bincount (m² bins).

    Step acceptance, cheapest test first: (1) if no vote's logit moves by more than 1,
    the loss surely decreased (the logistic loss has |third derivative| ≤ second
    derivative, so along the step the curvature grows at most e-fold, and a full Newton
    step then lowers the loss); (2) if the slope at the trial point along the step is
    still ≤ 0, convexity means the loss went down; (3) otherwise the loss is compared
    and the step halved while it rose.
    """
    from scipy.special import expit  # imported here: it costs 0.3–0.6 s to import

    s_dim = zt.shape[0]
    lam = np.r_[np.full(m, reg / math.log(10.0) ** 2), np.full(s_dim, reg)]
    every, models = np.arange(m + s_dim), np.arange(m)
    cy = c * y

    def state(p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        th = p[:m]
        eta = (th[:, None] - th[None, :]).ravel()[key] + p[m:] @ zt
        mu = expit(eta)
        resid = cy - c * mu
        r_pair = np.bincount(key, resid, m * m).reshape(m, m)
        grad = np.r_[r_pair.sum(axis=1) - r_pair.sum(axis=0), zt @ resid]
        grad -= lam * p
        return eta, mu, grad  # grad is −∇f

    def loss(p: np.ndarray, eta: np.ndarray) -> float:
        softplus = np.maximum(eta, 0.0) + np.log1p(np.exp(-np.abs(eta)))
        value = np.einsum("n,n->", c, softplus) - np.einsum("n,n->", cy, eta)
        return float(value) + 0.5 * float((lam * p * p).sum())

    eta, mu, grad = state(params)
    for _ in range(_MAX_ITER):
        weight = c * mu * (1.0 - mu)
        zw = zt * weight
        w_pair = np.bincount(key, weight, m * m).reshape(m, m)
        w_sym = w_pair + w_pair.T
        hess = np.empty((m + s_dim, m + s_dim))
        hess[:m, :m] = -w_sym
        hess[models, models] = w_sym.sum(axis=1)
        for k in range(s_dim):
            x_pair = np.bincount(key, zw[k], m * m).reshape(m, m)
            hess[:m, m + k] = hess[m + k, :m] = x_pair.sum(axis=1) - x_pair.sum(axis=0)
        hess[m:, m:] = zw @ zt.T
        hess[every, every] += lam
        step = np.linalg.solve(hess, grad)
        # Newton converges quadratically: after a step this small the error is ~step².
        if np.abs(step).max() < _TOL:
            return params + step
        base = None
        for _halving in range(40):
            trial = params + step
            t_eta, t_mu, t_grad = state(trial)
            moves = 2.0 * np.abs(step[:m]).max() + float((np.abs(step[m:]) * zmax).sum())
            if moves <= 1.0 or float((t_grad * step).sum()) >= 0:
                break
            base = loss(params, eta) if base is None else base
            if loss(trial, t_eta) <= base:
                break
            step *= 0.5
        params, eta, mu, grad = trial, t_eta, t_mu, t_grad
    return params


def fit_style(table: VoteTable, features: tuple[str, ...], *, bootstrap: int = 100,
              seed: int = 0, reg: float = STYLE_L2, procedure: str = "ours") -> StyleResult:
    """Style-controlled ratings and coefficients, with ``bootstrap`` resampled fits, on the votes
    ``procedure`` chooses ("ours": all; "paper": decisive with citations on both sides, see
    ``released_votes``; "paper-sample": decisive, sampled, see ``paper_votes``), all ``features``
    in one fit. For the released script's one-fit-per-feature analysis use ``fit_style_paper``."""
    if reg <= 0:
        raise LeaderboardInputError("style control needs a positive L2 penalty")
    if procedure not in STYLE_PROCEDURES:
        raise LeaderboardInputError(f"unknown style procedure {procedure!r}; use {' or '.join(STYLE_PROCEDURES)}")
    features = tuple(features)
    within, undecided, unsampled, uncited = None, 0, 0, 0
    if procedure != "ours":
        _, has = style_matrix(table, features)  # the votes carrying the features, before choosing
        if procedure == "paper":
            within, undecided, uncited = released_votes(table, has)
            kept = "decisive votes (A or B) in which both answers cite at least once"
        else:
            within, undecided, unsampled = paper_votes(table, has, seed)
            kept = "decisive votes (A or B) only"
        if within.sum() < 2:
            raise LeaderboardInputError(f"the {procedure!r} style procedure fits {kept}, "
                                        "and fewer than two carry the chosen features")
    z, mask = style_matrix(table, features, within)
    a, b, o = table.a[mask], table.b[mask], table.outcome[mask]
    present, local = np.unique(np.concatenate([a, b]), return_inverse=True)
    m, n, s_dim = int(present.size), int(mask.sum()), z.shape[1]
    key = local[:n].astype(np.intp) * m + local[n:]
    y = score_of_a(o)
    zt = np.ascontiguousarray(z.T)
    zmax = np.abs(zt).max(axis=1)
    point = _newton(key, zt, y, np.ones(n), m, np.zeros(m + s_dim), reg, zmax)
    rng = np.random.default_rng(seed)
    boot = np.empty((bootstrap, m + s_dim))
    for r in range(bootstrap):
        counts = np.bincount(rng.integers(0, n, size=n), minlength=n)
        used = np.flatnonzero(counts)  # fit on the drawn votes only: fewer, cache-resident
        boot[r] = _newton(key[used], zt[:, used], y[used], counts[used].astype(np.float64), m,
                          point.copy(), reg, zmax)
    excluded = int((~mask).sum()) - undecided - unsampled - uncited
    return StyleResult(features, present, point[:m], point[m:], boot[:, :m], boot[:, m:],
                       n, excluded, procedure, undecided, unsampled, uncited)


def fit_style_paper(table: VoteTable, features: tuple[str, ...], *, bootstrap: int = 100,
                    seed: int = 0, reg: float = STYLE_L2) -> tuple[StyleResult, ...]:
    """The released script's analysis: one fit per group of ``paper_groups`` (each on the decisive
    votes in which both answers cite and which carry that group's features), in that order."""
    return tuple(fit_style(table, group, bootstrap=bootstrap, seed=seed, reg=reg, procedure="paper")
                 for group in paper_groups(tuple(features)))
