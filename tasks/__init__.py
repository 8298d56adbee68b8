"""Task pipelines and evaluations built on dpc: COPA scoring today; SWAG/AF, AFLite and INLI
pipelines as their issues land."""
