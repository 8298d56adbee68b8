"""Implied NLI (Havaldar et al. 2025): a 4-way classifier of (premise, hypothesis) and a
generator of a hypothesis's explicit/neutral/contradiction variants through the engine.

- :mod:`tasks.inli.classifier`: the cross-encoder classifier, its training and its report
- :mod:`tasks.inli.hypotheses`: variants of an implied entailment, decoded with constraints
- :mod:`tasks.inli.cli`: ``dpc inli train|eval|predict|variants``
"""
