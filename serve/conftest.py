"""pytest: without the ``demo`` extra, the modules that import Gradio are not collected for
doctests (``dpc`` itself works without it)."""

import importlib.util

collect_ignore = [] if importlib.util.find_spec("gradio") else ["app.py"]
