"""Recall: candidates, relevance, ranking, budget, rendering and traces. Internal:
users meet it through ``Memory.recall`` and the :class:`~remem.recall.engine.Recall`
and :class:`~remem.recall.trace.Trace` results exported by :mod:`remem`.
"""
