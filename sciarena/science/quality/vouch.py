"""Vouching: which votes count on the default board, as a filter step over a board's vote table.

Campaigns (``campaign.detect_campaigns``: voter ids, new or established, that as a group lift or sink a
model; ``guard`` counts one again when leaving it out would do harm) are found
first, over every vote in the order cast (timestamps; untimed votes last). The quality check
(``check.check_votes``: the paper's A.5 plus the position and consensus tests, Holm within a voter and
Benjamini–Hochberg over voters at ``alpha``) then
runs on every other vote, redacted ones too: they say as much about a voter; a campaign's votes are
not part of the consensus honest voters are judged by. Flagged voters' votes and battles whose
answers were redacted for naming a model are left out unless included; votes without a voter id are
history for the check and are kept. Campaigns are left out with the flagged votes, and counted again
with them.
``count_anonymous=False`` (the operator's SCIARENA_COUNT_ANONYMOUS=0) leaves out every vote whose
voter is not signed in. The board never imports this module: the CLI and the wiring
choose to apply it (``board.table.leave_out`` does the removal and records the counts).
"""

from __future__ import annotations

import os
from typing import Iterable

import numpy as np

from sciarena.board.table import Exclusions, VoteTable, leave_out, read_table
from sciarena.science.quality.campaign import detect_campaigns
from sciarena.science.quality.check import VoteArrays, check_votes
from sciarena.science.quality.report import DEFAULT_ALPHA
from sciarena.votes.voter import SIGNED_IN_PREFIX


def vouched(table: VoteTable, *, include_flagged: bool = False, include_redacted: bool = False,
            alpha: float | None = None, seed: int = 0, count_anonymous: bool = True) -> VoteTable:
    """The votes that count: without flagged voters' votes and redacted battles unless included.

    Campaigns are found first; the quality check (``sciarena.science.quality.check.check_votes``: A.5 plus
    the position and consensus tests, Holm at ``alpha``) runs on every other vote of the table, in the
    order votes were cast (timestamps; untimed votes last), redacted ones too: they say as much about a
    voter. Votes without a voter id are history for the check and are kept. The result carries
    :class:`Exclusions`; raises LeaderboardInputError when nothing is left."""
    drop, excluded = vouch_mask(table, include_flagged=include_flagged, include_redacted=include_redacted,
                                alpha=alpha, seed=seed, count_anonymous=count_anonymous)
    return leave_out(table, drop, excluded)


def vouch_mask(table: VoteTable, *, include_flagged: bool = False, include_redacted: bool = False,
               alpha: float | None = None, seed: int = 0, count_anonymous: bool = True
               ) -> tuple[np.ndarray, Exclusions]:
    """(which votes of ``table`` :func:`vouched` leaves out, what it left out): the data statistics
    use the mask to count the very votes the board counts."""
    alpha = DEFAULT_ALPHA if alpha is None else alpha
    n = table.n_votes
    voter = table.voter if table.voter is not None else np.full(n, -1, dtype=np.int32)
    flagged = np.zeros(n, dtype=bool)
    campaign = np.zeros(n, dtype=bool)
    n_flagged = checked = n_campaigns = n_again = 0
    warnings: tuple[str, ...] = ()
    if (voter >= 0).any():
        stamps = np.where(np.isnan(table.timestamp), np.inf, table.timestamp)
        order = np.argsort(stamps, kind="stable")  # stable: file order among equal times
        found = detect_campaigns(table.models, table.voters, voter[order].astype(np.int64), table.a[order],
                                 table.b[order], table.outcome[order], table.timestamp[order], alpha=alpha)
        n_campaigns = len(found.campaigns)
        n_again = sum(c.counted_again for c in found.campaigns)
        warnings = tuple(f"{c.direction} {c.model}: {c.warning}" for c in found.campaigns if c.warning)
        campaign[order] = found.drop
        arrays = VoteArrays(table.models, table.voters, voter[order].astype(np.int64),
                            table.a[order].astype(np.int64), table.b[order].astype(np.int64),
                            table.outcome[order].astype(np.int64))
        # The voter checks run without the campaigns' votes: the consensus a voter is judged by is the
        # arena's, not a campaign's, so a campaign cannot get honest voters flagged (or cleared).
        report = check_votes(arrays.subset(~found.drop), alpha=alpha, seed=seed)
        checked = len(report.voters)
        codes = {name: k for k, name in enumerate(table.voters)}
        bad = np.array([codes[v] for v in report.flagged], dtype=np.int64)
        n_flagged = len(bad)
        if n_flagged:
            flagged = np.isin(voter, bad)
    redacted = table.redacted if table.redacted is not None else np.zeros(n, dtype=bool)
    campaign &= ~flagged  # a flagged voter's vote is counted once, as flagged
    anonymous = np.zeros(n, dtype=bool)
    if not count_anonymous:
        signed = np.array([v.startswith(SIGNED_IN_PREFIX) for v in table.voters] + [False], dtype=bool)
        anonymous = (voter >= 0) & ~signed[voter]  # no voter id: the released history, kept
    drop = ((flagged | campaign) & (not include_flagged)) | (redacted & (not include_redacted)) | anonymous
    excluded = Exclusions(
        campaigns=n_campaigns, campaign_votes=int(campaign.sum()), campaigns_counted_again=n_again,
        campaign_warnings=warnings, anonymous_votes=int(anonymous.sum()),
        flagged_voters=n_flagged, flagged_votes=int(flagged.sum()), redacted_votes=int(redacted.sum()),
        left_out=int(drop.sum()), checked_voters=checked, unchecked_votes=int((voter < 0).sum()),
        include_flagged=include_flagged, include_redacted=include_redacted, alpha=alpha, seed=seed)
    return drop, excluded


def load_votes(sources: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], cache: bool = True, *,
               strict: bool = True, texts: bool = False, token: str | None = None,
               cache_dir: str | os.PathLike[str] | None = None, include_flagged: bool = False,
               include_redacted: bool = False, count_anonymous: bool = True) -> VoteTable:
    """The votes that count of files, folders and/or Hub dataset ids: ``read_table`` then :func:`vouched`
    (``table.excluded`` says what was left out)."""
    table = read_table(sources, cache, strict=strict, texts=texts, token=token, cache_dir=cache_dir)
    return vouched(table, include_flagged=include_flagged, include_redacted=include_redacted,
                   count_anonymous=count_anonymous)
