"""Formation: learning notes from conversations (classify, extract, revise, consolidate).

:mod:`~remem.formation.classify`'s ``Classifier`` protocol is public; every other
module here (the rule ladder, sentences, subjects, the LLM classifier's plumbing) is
internal.
"""
