"""Question → numbered references.

Local retrieval, in data-flow order: ``corpus`` (read paper records), ``passages``
(split text into ~250-word passages), ``bm25`` (tokenise, build the BM25 matrix, pick
the top k), ``local`` (the saved index, the local retriever, the bundled demo index),
``dense`` (optional: passages embedded once, searched by cosine), ``relevance`` (the
score floor: weak passages dropped, none at all for an off-topic question), ``grouping``
(passages → numbered references), ``cli`` (the ``index`` command). ``quality`` scores a
retriever on a labelled query set (``benchmarks/bench_relevance.py``).
Nothing is imported here so that importing the package stays cheap.
"""
