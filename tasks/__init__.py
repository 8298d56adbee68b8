"""The tasks: the papers' pipelines and evaluations on the knowledge and the engine below.

- :mod:`tasks.copa`: COPA, every scorer family one module (graph, window, generator,
  CausalBERT), and ``dpc eval generation`` (Table 3 of Li et al. on COPA premises)
- :mod:`tasks.swag`: SWAG counterfactual endings oversampled through the engine, and Adversarial
  Filtering with a committee of stylistic models (``dpc swag``)
- :mod:`tasks.aflite`: AFLite over any labelled dataset's embeddings, with its baselines and
  measures (``dpc aflite``)
- :mod:`tasks.inli`: implied NLI, the 4-way classifier and the hypothesis-variant generator
  (``dpc inli``)
- :mod:`tasks.datasets`: the task formats read and written (HellaSwag/SWAG, WinoGrande, INLI)
- :mod:`tasks.cli`: ``dpc eval ...``

A task imports from every layer below it (the miner, the graph, training, the engine, guided
generation), and nothing below imports a task (``docs/architecture.md``).
"""
