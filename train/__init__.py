"""Training and loading of dpc's generators."""
