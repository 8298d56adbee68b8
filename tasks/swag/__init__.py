"""SWAG on the dpc engine: oversampled counterfactual endings and Adversarial Filtering.

Zellers et al. 2018 build "what happens next?" questions: an ending model conditioned on a
context oversamples many distinct endings (:mod:`tasks.swag.oversample`, through
:func:`dpc_decode.sample`); the endings that restate the gold leave the pool
(:mod:`tasks.swag.restatements`); then Adversarial Filtering
(:mod:`tasks.swag.adversarial_filter`) swaps the negatives a committee of stylistic classifiers
(:mod:`tasks.swag.committee`) finds easy for ones it finds hard. :mod:`tasks.swag.ending_model` trains the ending model,
:mod:`tasks.swag.plot` draws the AF curve, :mod:`tasks.swag.cli` is ``dpc swag``.
"""
