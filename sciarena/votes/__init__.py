"""Vote records: the schema, the local append-only store, and (later) Hub sync and loading."""
