"""The only code that reads or writes vote files: the record schema and vote vocabulary (schema), who a
voter is under a salted hash (voter), writing (store/: local shards, Hub sync, reviews, battle counts) and
reading (read/: files, folders and Hub ids in our schema, the released one or FastChat's).

In: a finished battle and its vote. Out: stored records; columns and records for the board and analyses.
"""
