"""Writing votes: the local append-only shards (local), their sync to a Hugging Face dataset (hub), the
expert reviews beside them (reviews) and each model's battle count for pair sampling (counts).

In: a vote record (``votes.schema.vote_record``). Out: durable JSON-lines shards, locally and on the Hub.
"""
