"""Drug names from a maintained dictionary: ``drug-named-entity-recognition``.

The package ships, offline, a dictionary of about 100,000 drug names and brand names
built from DrugBank, MeSH, MedlinePlus, the NHS and Wikipedia, and is updated as drugs
come to market (``Rexulti``, ``Vraylar``, ``Qelbree``). The guard reads that file
directly, once, on first use (about two seconds), and keeps one set of names:

- only drugs with a MedlinePlus monograph (the medicines people are prescribed or buy,
  not research chemicals, herbs or MeSH compounds), by every generic and brand name of
  one word of five letters or more;
- minus the over-the-counter remedies for passing complaints (pain relief, colds,
  allergies, digestion, sleep aids, vitamins: :data:`_OTC`): taking one discloses no
  condition;
- minus the few names that are also words of generic English (:data:`_ENGLISH`, found by
  intersecting the names with the words of the Python, Debian and installed packages'
  documentation on this machine).

A name found here is a health cue; whether it is a disclosure is decided by the
scoring rule (:mod:`._score`) and by :mod:`.health` (a person in the sentence).
"""

from __future__ import annotations

import bz2
import contextlib
import importlib.util
import os
import pickle  # noqa: S403 - the dictionary is an installed package's own data file
import re
from functools import lru_cache
from pathlib import Path

__all__ = ["drug_names", "find_drugs"]

_OTC = frozenset(
    "acetaminophen|paracetamol|ibuprofen|naproxen|aspirin|diphenhydramine|doxylamine|"
    "loratadine|desloratadine|cetirizine|levocetirizine|fexofenadine|chlorpheniramine|"
    "pseudoephedrine|phenylephrine|guaifenesin|dextromethorphan|oxymetazoline|loperamide|"
    "bismuth subsalicylate|simethicone|calcium carbonate|calcium supplement|magnesium "
    "hydroxide|aluminum hydroxide|psyllium|methylcellulose|senna|sennosides|bisacodyl|"
    "docusate|stool softeners|polyethylene glycol 3350|beta-galactosidase|lactase|"
    "melatonin|caffeine|menthol|camphor|benzocaine|lidocaine|hydrocortisone|"
    "clotrimazole|miconazole|terbinafine|tolnaftate|bacitracin|neomycin|polymyxin b|"
    "meclizine|dimenhydrinate|zinc oxide|salicylic acid|benzoyl peroxide|minoxidil|"
    "ascorbic acid|vitamin c|cholecalciferol|ergocalciferol|vitamin d|cyanocobalamin|"
    "folic acid|multivitamins|ferrous sulfate|iron|potassium chloride|fluoride|"
    "artificial tears|saline|glycerin|petrolatum|oatmeal|aloe vera|witch hazel".split("|")
)
"""Over-the-counter remedies (canonical names): a name of these is not a cue."""

_ENGLISH = frozenset(
    "buffers indicators generics armour chrom selen tetris diamonds modus sulfur phenols "
    "peppermint".split()
)
"""Names that are also generic English words (see the module docstring)."""

_WORD = re.compile(r"(?<![a-z0-9])[a-z][a-z-]{4,}(?![a-z0-9])")
_NAME = re.compile(r"[a-z][a-z-]{4,}")


def _dictionary_path() -> Path | None:
    spec = importlib.util.find_spec("drug_named_entity_recognition")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "drug_ner_dictionary.pkl.bz2"
    return path if path.is_file() else None


_CACHE_VERSION = "1"


def _cache_file(path: Path) -> Path:
    """Where the derived name list is kept, keyed by the dictionary file's size and
    modification time and by :data:`_CACHE_VERSION` (a new package version or a change
    of the rules above makes a new file)."""
    from platformdirs import user_cache_dir

    stat = path.stat()
    key = f"{_CACHE_VERSION}-{stat.st_size}-{int(stat.st_mtime)}"
    return Path(user_cache_dir("memory-graph")) / f"guard-drug-names-{key}.txt"


@lru_cache(maxsize=1)
def drug_names() -> frozenset[str]:
    """Every one-word drug name the guard reads as a drug (lower case).

    Returns:
        The set of names; empty when the dictionary package is not installed (the
        guard's own lists in :mod:`.health` still apply).

    >>> {"rexulti", "brexpiprazole", "vraylar"} <= drug_names()
    True
    >>> {"tylenol", "melatonin", "diamonds"} & drug_names()
    set()
    """
    path = _dictionary_path()
    if path is None:
        return frozenset()
    cache = _cache_file(path)
    with contextlib.suppress(OSError, UnicodeDecodeError):
        return frozenset(cache.read_text("utf-8").split())
    names = _read_dictionary(path)
    with contextlib.suppress(OSError):  # a read-only home only costs the next process time
        cache.parent.mkdir(parents=True, exist_ok=True)
        partial = cache.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text("\n".join(sorted(names)), "utf-8")
        partial.replace(cache)
    return names


def _read_dictionary(path: Path) -> frozenset[str]:
    """The names of :func:`drug_names`, read from the package's dictionary file."""
    with bz2.open(path, "rb") as handle:
        data = pickle.load(handle)  # noqa: S301 - the installed package's data file
    canonical_data = data["drug_canonical_to_data"]
    names: set[str] = set()
    for variant, canonicals in data["drug_variant_to_canonical"].items():
        if not _NAME.fullmatch(variant) or variant in _ENGLISH:
            continue
        kept = [
            c
            for c in canonicals
            if c not in _OTC and "medline_plus_id" in canonical_data.get(c, {})
        ]
        if kept:
            names.add(variant)
    return frozenset(names)


def find_drugs(low: str) -> list[tuple[int, int]]:
    """Spans of drug names in a lowered text (words of five letters or more).

    >>> find_drugs("started rexulti and tylenol")
    [(8, 15)]
    """
    names = drug_names()
    return [m.span() for m in _WORD.finditer(low) if m.group(0) in names]
