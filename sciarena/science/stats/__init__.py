"""Analyses over stored votes (``python -m sciarena stats``).

``stats``: the paper's data statistics (§4.2 Figure 3, appendix B.2) and its failure cases
(§5.3), as one frozen record computed by a pure function; ``plots``: that record as
matplotlib figures; ``cli``: the command.
"""
