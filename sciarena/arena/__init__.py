"""The rules of a battle and a vote (rules: ``Arena.start_battle`` and ``Arena.vote``), who battles whom
(pairing, sampling, sampler_feed), both answers at once (runner), the question's labels at vote time
(labels/) and the abuse limits (limits/).

In: a question and a visitor; later a ballot. Out: a live stream of both answers, then a stored vote.
"""
