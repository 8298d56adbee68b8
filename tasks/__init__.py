"""The tasks: the papers' pipelines and evaluations on the knowledge and the engine below.

- :mod:`tasks.copa`: COPA, every scorer family one module (graph, window, generator,
  CausalBERT), and ``dpc eval generation`` (Table 3 of Li et al. on COPA premises)
- :mod:`tasks.cli`: ``dpc eval ...``

A task imports from every layer below it (the miner, the graph, training, the engine, guided
generation), and nothing below imports a task (``docs/architecture.md``). New pipelines (SWAG
with Adversarial Filtering, AFLite, implied NLI) go beside ``copa`` as ``tasks/<name>/``.
"""
