"""The sensitive-data guard: a deterministic verdict over one piece of text (zh + en).

The guard is the second layer of extraction (DESIGN §5). It runs on every candidate and
on any stored text field, whatever a model said, and blocks six categories:
``health``, ``finance``, ``gov_id``, ``address``, ``political_religious`` and
``third_party`` (any of these, or contact details, sexuality, immigration or criminal
status, about another person). The user's own phone number or e-mail is allowed.

Pipeline (see ARCHITECTURE.md, "The guard"):

1. :mod:`._normalize` builds one normalized view (NFKC, zero-width removal, homoglyphs,
   Traditional -> Simplified, spaced-out characters, Chinese numerals) with a map back to
   the original offsets.
2. :mod:`._cues` cuts it into sentences and finds who each sentence is about and the
   benign markers (topic talk, hypotheticals, fiction, pets, quoted titles).
3. One detector per category (:mod:`.ids`, :mod:`.finance`, :mod:`.address`,
   :mod:`.health`, :mod:`.religion`, :mod:`.politics`, :mod:`.third_party`) proposes cues.
4. :mod:`._score` combines each cue with the person and the markers into a verdict.
5. Optionally, :func:`with_model_opinion` lets a chat model review what was allowed; it
   can add blocks, never remove them (off by default). The extraction model's own
   ``sensitivity`` per candidate is combined the same way (:func:`with_declared`).

Everything is sentence-local, so a text's verdict does not depend on what it is joined
with. The verdict's ``reason`` names the rule and never repeats the text; ``spans`` give
the blocked parts in the original text's offsets.

>>> check("I use vim").allowed
True
>>> v = check("I'm on antidepressants")
>>> (v.allowed, v.category)
(False, 'health')
>>> check("我在东八区").allowed
True
"""

from __future__ import annotations

from ._check import check, check_many
from ._model import GuardOpinion, with_declared, with_model_opinion
from ._normalize import Normalized, normalize
from ._types import CATEGORIES, GuardCategory, GuardVerdict

__all__ = [
    "CATEGORIES",
    "GuardCategory",
    "GuardOpinion",
    "GuardVerdict",
    "Normalized",
    "check",
    "check_many",
    "normalize",
    "with_declared",
    "with_model_opinion",
]
