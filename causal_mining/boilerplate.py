"""Boilerplate of a document: licence, header and navigation text, skipped paragraph by paragraph
before any pattern work; the worker counts the skipped paragraphs as
:attr:`~causal_mining.filters.DropReason.BOILERPLATE`.
"""

from __future__ import annotations

import re

__all__ = ["BoilerplateFilter"]


class BoilerplateFilter:
    """Skip licence, header and navigation text of one document, paragraph by paragraph.

    Project Gutenberg files (several books concatenated) are handled with their markers: text
    after ``*** END OF ... PROJECT GUTENBERG`` is skipped up to the next ``*** START OF``; any
    paragraph naming Project Gutenberg, or a header field ("Title:", "Release Date:", ...), is
    skipped. Web text: short paragraphs with navigation or legal phrases (cookies, privacy
    policy, all rights reserved, ...) are skipped.

    Examples
    --------
    >>> f = BoilerplateFilter()
    >>> [f.keep(p) for p in ["Title: Emma", "*** START OF THE PROJECT GUTENBERG EBOOK EMMA ***",
    ...  "Emma Woodhouse was handsome.", "*** END OF THE PROJECT GUTENBERG EBOOK EMMA ***",
    ...  "You may copy it because it is free.", "*** START OF THIS PROJECT GUTENBERG EBOOK X ***",
    ...  "Chapter one begins."]]
    [False, False, True, False, False, False, True]
    """

    _START = re.compile(r"\*\*\*\s*START OF (?:THE|THIS) PROJECT GUTENBERG", re.IGNORECASE)
    _END = re.compile(
        r"\*\*\*\s*END OF (?:THE|THIS) PROJECT GUTENBERG|^End of (?:the |this )?Project Gutenberg",
        re.IGNORECASE,
    )
    _LINE = re.compile(
        r"project gutenberg|gutenberg\.org|gutenberg-tm|^(?:title|author|release date|language|"
        r"character set encoding|produced by|posting date|last updated|e-?text prepared by|"
        r"transcriber's note|updated editions)\s*:",
        re.IGNORECASE,
    )
    _WEB = re.compile(
        r"cookies?\b|privacy policy|terms of (?:use|service)|all rights reserved|javascript|"
        r"click here|subscribe|sign up|log ?in\b|copyright \u00a9|\u00a9 ?\d{4}",
        re.IGNORECASE,
    )

    def __init__(self) -> None:
        self.skipping = False

    def keep(self, paragraph: str) -> bool:
        """Whether ``paragraph`` is content (``True``) or boilerplate (``False``)."""
        if self._START.search(paragraph):
            self.skipping = False
            return False
        if self._END.search(paragraph):
            self.skipping = True
            return False
        if self.skipping or self._LINE.search(paragraph):
            return False
        return not (len(paragraph) < 300 and self._WEB.search(paragraph))
