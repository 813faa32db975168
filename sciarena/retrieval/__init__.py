"""Question → numbered references.

Modules, in data-flow order: ``corpus`` (read paper records), ``passages`` (split
text into ~250-word passages), ``local`` (BM25 index, the local retriever, the
bundled demo index), ``grouping`` (passages → numbered references), ``cli`` (the
``index`` command). Nothing is imported here so that importing the package stays
cheap; import the module you need.
"""
