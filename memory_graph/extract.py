"""Guarded extraction: the public face of :mod:`memory_graph.extraction`.

``from memory_graph.extract import create_extractor, extract_candidates, plan_writes``.
"""

from __future__ import annotations

from .extraction import (
    EXTRACTION_PROMPT,
    PROFILE_PREFIX,
    Action,
    Candidate,
    CandidateModel,
    ExtractedMemories,
    ExtractionReport,
    PlannedWrite,
    PlanStatus,
    StructuredOutputMethod,
    WritePlan,
    aextract_candidates,
    create_extractor,
    create_pattern_extractor,
    extract_candidates,
    extract_patterns,
    finish_extraction,
    fold,
    ground,
    normalize_key,
    plan_writes,
    render_window,
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
