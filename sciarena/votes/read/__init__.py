"""Reading votes: the one place that turns vote files, folders and Hub dataset ids into votes.

In: sources (files, folders, ``owner/name`` Hub ids), in our schema, the released SciArena schema or
FastChat battle files. Out: columns for the leaderboard and the checks (``read_columns``), whole
records for the analyses (``load``, ``read_records``), and the app's live list of vote files
(``VoteSource``: Hub copies + local shards). ``sources`` finds files, ``parse``/``fields``/``arrow_io``/
``duck`` read their formats, ``copy`` keeps each shard's columnar copy and ``warmer`` keeps it current.
"""

from sciarena.votes.read.columns import Read, read_columns, read_file
from sciarena.votes.read.live import VoteSource, open_vote_source
from sciarena.votes.read.records import load, normalise, read_records
from sciarena.votes.read.sources import first_line, is_hub_id, local_vote_files, mirror_hub_votes, vote_files

__all__ = ["Read", "VoteSource", "first_line", "is_hub_id", "load", "local_vote_files", "mirror_hub_votes",
           "normalise", "open_vote_source", "read_columns", "read_file", "read_records", "vote_files"]
