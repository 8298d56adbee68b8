"""The page's task tabs, one module each: :mod:`serve.tabs.inli` (hypothesis variants and the
classifier's labels), :mod:`serve.tabs.swag` (sampled endings and the AF committee's scores),
:mod:`serve.tabs.aflite` (an uploaded dataset filtered, with the paper's Figure 1); what a tab is
and how its models load: :mod:`serve.tabs.base` (:class:`~serve.tabs.base.TaskTab`,
:class:`~serve.tabs.base.Lazy`)."""

from __future__ import annotations

from pathlib import Path

from serve.tabs.aflite import AfliteTab
from serve.tabs.base import Lazy, TaskTab
from serve.tabs.inli import InliTab
from serve.tabs.swag import SwagTab

__all__ = ["AfliteTab", "InliTab", "Lazy", "SwagTab", "TaskTab", "default_tabs"]


def default_tabs(swag_committee: str | Path | None = None) -> list[TaskTab]:
    """The three task tabs over the bundled models (``swag_committee``: a pool folder of ``dpc
    swag oversample``/``filter`` whose committee scores the SWAG tab's endings)."""
    return [InliTab(), SwagTab(committee=swag_committee), AfliteTab()]
