"""AFLite (Sakaguchi et al. 2020, WinoGrande): adversarial filtering of any labelled dataset.

- :mod:`tasks.aflite.algorithm`: ``aflite(X, y, ...)``, the batched ensemble and its
  scikit-learn reference
- :mod:`tasks.aflite.embeddings`: a Hugging Face encoder (fine-tuned on a discarded random
  subset, the paper's recipe) and the on-disk embedding cache
- :mod:`tasks.aflite.formats`: WinoGrande, INLI, multiple-choice (JSON lines or the SWAG CSV)
  items as texts and labels, and the kept and removed items written back in their own format
- :mod:`tasks.aflite.baselines`: random reduction and PMI filtering
- :mod:`tasks.aflite.measures`: KL of the label-conditional PC1 histograms, the linear probe,
  the paper's Figure 1
- :mod:`tasks.aflite.cli`: ``dpc aflite``
"""
