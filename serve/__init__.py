"""``dpc serve``: a web page and an HTTP JSON API over guided generation and the engine.

:mod:`serve.service` holds the work (checked requests, models loaded once, a bounded queue,
cancellation) and imports no web framework; :mod:`serve.render` makes the page's HTML;
:mod:`serve.app` is the Gradio page and the JSON routes (the optional ``demo`` extra);
:mod:`serve.cli` registers the command; :mod:`serve.tabs` holds the task tabs, one module
each (:mod:`serve.tabs.inli`, :mod:`serve.tabs.swag`, :mod:`serve.tabs.aflite`).
"""
