"""Guarded extraction (DESIGN §5): candidates from what the user explicitly said.

- :func:`create_extractor` builds the LLM extractor (structured output); the offline
  :func:`create_pattern_extractor` needs no model.
- :func:`extract_candidates` / :func:`aextract_candidates` run an extractor, drop
  candidates whose quote is not a human message's words, attach provenance from the
  messages themselves, and drop (and count) what the sensitive-data guard blocks.
- :func:`plan_writes` merges candidates with stored state into planned writes, purely.
"""

from __future__ import annotations

from ._grounding import fold, ground
from ._llm import EXTRACTION_PROMPT, StructuredOutputMethod, create_extractor, render_window
from ._merge import PlannedWrite, PlanStatus, WritePlan, plan_writes
from ._patterns import create_pattern_extractor, extract_patterns
from ._pipeline import (
    ExtractionReport,
    aextract_candidates,
    extract_candidates,
    finish_extraction,
)
from ._schema import (
    PROFILE_PREFIX,
    Action,
    Candidate,
    CandidateModel,
    ExtractedMemories,
    normalize_key,
)

__all__ = [
    "EXTRACTION_PROMPT",
    "PROFILE_PREFIX",
    "Action",
    "Candidate",
    "CandidateModel",
    "ExtractedMemories",
    "ExtractionReport",
    "PlanStatus",
    "PlannedWrite",
    "StructuredOutputMethod",
    "WritePlan",
    "aextract_candidates",
    "create_extractor",
    "create_pattern_extractor",
    "extract_candidates",
    "extract_patterns",
    "finish_extraction",
    "fold",
    "ground",
    "normalize_key",
    "plan_writes",
    "render_window",
]
