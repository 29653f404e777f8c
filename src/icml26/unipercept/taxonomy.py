"""The perceptual-level taxonomy of UniPercept-Bench: Domain -> Category -> Criterion (spec §2.1).

Cao et al., *UniPercept: Towards Unified Perceptual-Level Image Understanding across Aesthetics,
Quality, Structure, and Texture* (arXiv:2512.21675), appendix Tables 10–12. The table is shipped
as data (``TAXONOMY_TABLE``) and every count is computed from it.

Deviations: the paper's headline says 17 categories / 43 criteria, while its appendix tables
enumerate 16 categories / 44 criteria; we ship the enumerated table and never hard-code a count.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["DOMAINS", "TAXONOMY_TABLE", "TEMPLATES", "Category", "Taxonomy"]

DOMAINS: Final = ("IAA", "IQA", "ISTA")
# QA templates are orthogonal to the criteria (spec §2.1); "Lv.Pred" exists for IAA and IQA only.
TEMPLATES: Final = ("What", "Which", "How", "Why", "Yes-No", "Lv.Pred")

# (domain, category name, abbreviation, criteria) — appendix Tables 10 (IAA), 11 (IQA), 12 (ISTA).
TAXONOMY_TABLE: Final[tuple[tuple[str, str, str, tuple[str, ...]], ...]] = (
    ("IAA", "Composition & Design", "Comp.", (
        "Visual Balance", "Hierarchical Emphasis", "Structural Organization",
        "Compositional Rhythm", "Harmonic Unity", "Composition & Design Level",
    )),
    ("IAA", "Visual Elements & Structure", "VisStr.", (
        "Line Dynamics", "Shape Clarity", "Form Realization", "Spatial Illusion",
        "Light Modeling", "Visual Elements & Structure Level",
    )),
    ("IAA", "Technical Execution", "Tech.", (
        "Material Proficiency", "Rendering Precision", "Focus Control",
        "Tonal and Exposure Control", "Technical Execution Level",
    )),
    ("IAA", "Originality & Creativity", "Creat.", (
        "Concept Innovation", "Creative Problem-Solving", "Originality & Creativity Level",
    )),
    ("IAA", "Theme & Communication", "Theme.", (
        "Subject Clarity", "Narrative Depth", "Cultural Insight", "Theme & Communication Level",
    )),
    ("IAA", "Emotion & Viewer Response", "Emo.", (
        "Emotional Resonance", "Viewer Engagement", "Interpretive Openness",
        "Emotion & Viewer Response Level",
    )),
    ("IAA", "Overall Gestalt", "Gest.", ("Holistic Cohesion", "Overall Gestalt Level")),
    ("IAA", "Comprehensive Evaluation", "CompEv.", ("Comprehensive Evaluation Level",)),
    ("IQA", "Distortion Location", "Loc.", ("Location Description", "Object Association")),
    ("IQA", "Distortion Severity", "Sev.", ("Severity Level",)),
    ("IQA", "Distortion Type", "Type.", ("Distortion Types Present",)),
    ("ISTA", "Scene Decomposition", "Scene.", ("Scene Classification",)),
    ("ISTA", "Physical Structure", "Phys.", ("Base Morphology", "Spatial Arrangement")),
    ("ISTA", "Material Representation", "Mat.", ("Material Identification", "Surface Behavior")),
    ("ISTA", "Geometric Composition", "Geo.", ("2D Contour", "3D Volume")),
    ("ISTA", "Semantic Perception", "Sem.", ("Functional Suggestion", "Stylistic Classification")),
)  # fmt: skip


@dataclass(frozen=True)
class Category:
    """One category of the taxonomy: its domain, full name, abbreviation and criteria."""

    domain: str
    name: str
    abbreviation: str
    criteria: tuple[str, ...]


@dataclass(frozen=True)
class Taxonomy:
    """Domain -> Category -> Criterion, validated on construction.

    Parameters
    ----------
    table
        Rows ``(domain, category, abbreviation, criteria)``.

    Examples
    --------
    >>> tax = Taxonomy.load_default()
    >>> tax.counts()
    {'domains': 3, 'categories': 16, 'criteria': 44}
    >>> tax.category_of("Severity Level")
    'Distortion Severity'
    """

    table: tuple[tuple[str, str, str, tuple[str, ...]], ...]

    def __post_init__(self) -> None:
        if not isinstance(self.table, tuple) or not self.table:
            raise TypeError("Taxonomy: table must be a non-empty tuple of rows.")
        seen_names: set[str] = set()
        seen_abbrev: set[str] = set()
        seen_criteria: set[tuple[str, str]] = set()
        for row in self.table:
            if not (isinstance(row, tuple) and len(row) == 4):
                raise TypeError(f"Taxonomy: table rows must be 4-tuples; got {row!r}.")
            domain, name, abbrev, criteria = row
            if domain not in DOMAINS:
                raise ValueError(
                    f"Taxonomy: table domain must be one of {DOMAINS}; got {domain!r}."
                )
            if name in seen_names or abbrev in seen_abbrev:
                raise ValueError(f"Taxonomy: table category {name!r} ({abbrev!r}) is repeated.")
            if not criteria or not all(isinstance(c, str) and c for c in criteria):
                raise ValueError(f"Taxonomy: table category {name!r} has no valid criteria.")
            for criterion in criteria:
                if (domain, criterion) in seen_criteria:
                    raise ValueError(f"Taxonomy: table criterion {criterion!r} is repeated.")
                seen_criteria.add((domain, criterion))
            seen_names.add(name)
            seen_abbrev.add(abbrev)

    @classmethod
    def load_default(cls) -> Taxonomy:
        """The taxonomy enumerated in the paper's appendix (Tables 10–12)."""
        return _default_taxonomy()

    @property
    def domains(self) -> tuple[str, ...]:
        """The domains in table order."""
        return tuple(dict.fromkeys(row[0] for row in self.table))

    @property
    def all_categories(self) -> tuple[Category, ...]:
        """Every category, in table order."""
        return tuple(Category(*row) for row in self.table)

    def categories(self, domain: str) -> tuple[str, ...]:
        """Category names of ``domain``."""
        if domain not in self.domains:
            raise ValueError(f"Taxonomy: domain must be one of {self.domains}; got {domain!r}.")
        return tuple(row[1] for row in self.table if row[0] == domain)

    def criteria(self, category: str) -> tuple[str, ...]:
        """Criteria of the category named ``category`` (full name or abbreviation)."""
        for row in self.table:
            if category in (row[1], row[2]):
                return row[3]
        raise ValueError(f"Taxonomy: category must be a category name; got {category!r}.")

    def category_of(self, criterion: str) -> str:
        """The category name that holds ``criterion``."""
        for row in self.table:
            if criterion in row[3]:
                return row[1]
        raise ValueError(f"Taxonomy: criterion must be a criterion name; got {criterion!r}.")

    def domain_of(self, category: str) -> str:
        """The domain of the category named ``category``."""
        for row in self.table:
            if category in (row[1], row[2]):
                return row[0]
        raise ValueError(f"Taxonomy: category must be a category name; got {category!r}.")

    def contains(self, domain: str, category: str, criterion: str) -> bool:
        """Whether (domain, category, criterion) is a valid path of the taxonomy."""
        return any(
            row[0] == domain and category in (row[1], row[2]) and criterion in row[3]
            for row in self.table
        )

    def counts(self) -> Mapping[str, int]:
        """Numbers of domains, categories and criteria, computed from the table."""
        return {
            "domains": len(self.domains),
            "categories": len(self.table),
            "criteria": sum(len(row[3]) for row in self.table),
        }

    def index(self) -> dict[str, dict[str, int]]:
        """Integer ids for domains, categories and criteria (used by query embeddings)."""
        criteria = [c for row in self.table for c in row[3]]
        return {
            "domain": {d: i for i, d in enumerate(self.domains)},
            "category": {row[1]: i for i, row in enumerate(self.table)},
            "criterion": {c: i for i, c in enumerate(dict.fromkeys(criteria))},
        }


@functools.cache
def _default_taxonomy() -> Taxonomy:
    return Taxonomy(TAXONOMY_TABLE)  # frozen: one validated instance is shared
