"""Question → numbered references.

Local retrieval, in data-flow order: ``corpus`` (read paper records), ``passages``
(split text into ~250-word passages), ``bm25`` (tokenise, build the BM25 matrix, pick
the top k), ``local`` (the saved index, the local retriever, the bundled demo index),
``grouping`` (passages → numbered references), ``cli`` (the ``index`` command).
Nothing is imported here so that importing the package stays cheap.
"""
