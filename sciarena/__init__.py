"""SciArena: an open arena for scientific-literature question answering.

The package reads in data-flow order, each stage a package that imports only the ones before it
(checked by the import contracts in pyproject.toml):

core → providers → retrieval → answer → pipelines → votes → arena → board → science → wiring → ui → cli

core holds the typed records, errors and settings every stage shares; providers answer; retrieval finds
the papers; answer builds the prompt and cleans and anonymises what comes back; pipelines are multi-step
contestants; votes stores and reads votes; arena holds the rules of a battle and a vote; board ranks;
science analyses stored votes; wiring builds every service once; ui and cli are the two front doors.
"""

__version__ = "0.1.0"
