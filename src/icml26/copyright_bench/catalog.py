"""The asset catalog: pydantic-validated records, search, and the shipped default catalog.

Copyright-Bench (ICML 2026, poster 66009), spec §2.2. Each asset has one license class and a
``license_text`` as its "source page" shows it. The default catalog (``data/catalog.json``) holds
**real public-domain works** (Hokusai's *Great Wave*, 1831; Van Gogh's *Starry Night*, 1889;
Redouté's roses, 1817; ...) listed by title only, and **fictional copyrighted works** with
realistic metadata (e.g. "Captain Comet" character art, © Nebula Nine Studios, 2019), so the
package reproduces no protected content. Any catalog file with the same schema can replace it.

Deviations (details in docs/copyright_bench.md): the catalog also lists *themes* (name, label,
business types) so that a catalog file can be checked for a lawful and an infringing candidate in
every (theme, family, slot) it serves; search relevance is token overlap (spec: unspecified).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from icml26.copyright_bench.families import (
    FAMILY_SLOTS,
    KINDS,
    Family,
    can_be_lawful,
)
from icml26.copyright_bench.licenses import License

__all__ = ["PD_CUTOFF_YEAR", "Asset", "Catalog", "CatalogError", "Theme", "tokens"]

PD_CUTOFF_YEAR = 1930  # a PUBLIC_DOMAIN asset must be this old or older (spec §7.2)
_WORD = re.compile(r"[a-z0-9]+")
# Search words that stand for several kinds.
_KIND_WORDS = {
    "photo": ("photo", "image"),
    "illustration": ("illustration", "image"),
    "painting": ("painting", "image"),
    "font": ("font",),
    "music": ("music",),
    "icon": ("icon", "icons"),
    "text_snippet": ("text",),
}


class CatalogError(ValueError):
    """A catalog is invalid; the message names the asset (or theme/slot) and the field."""


def tokens(text: str) -> frozenset[str]:
    """Lower-case alphanumeric words of ``text``."""
    return frozenset(_WORD.findall(text.lower()))


class Asset(BaseModel):
    """One catalog record (spec §2.2).

    Examples
    --------
    >>> a = Asset(asset_id="wave", title="The Great Wave off Kanagawa", creator="Hokusai",
    ...           year=1831, kind="painting", tags=("ocean",), description="woodblock print",
    ...           license="public_domain", license_text="Public domain.", source="Open Museum",
    ...           fame=0.7, quality=0.9)
    >>> a.license.value
    'public_domain'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    asset_id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    title: str = Field(min_length=1)
    creator: str = Field(min_length=1)
    year: int
    kind: Literal["photo", "illustration", "painting", "font", "music", "icon", "text_snippet"]
    tags: tuple[str, ...] = Field(min_length=1)
    description: str
    license: License
    license_text: str = Field(min_length=1)
    source: str = Field(min_length=1)
    fame: float = Field(ge=0.0, le=1.0)
    quality: float = Field(ge=0.0, le=1.0)
    watermark: bool = False
    price: float = Field(default=0.0, ge=0.0)

    @field_validator("license_text", "title", "creator", "source")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @model_validator(mode="after")
    def _license_rules(self) -> Asset:
        if self.license is License.PUBLIC_DOMAIN and self.year > PD_CUTOFF_YEAR:
            raise ValueError(
                f"year {self.year} is after {PD_CUTOFF_YEAR}: a public_domain asset must be older "
                "(mark a recent free work cc0)"
            )
        if self.license is License.STOCK_PAID and self.price <= 0:
            raise ValueError("a stock_paid asset needs a price > 0")
        return self

    @property
    def search_tokens(self) -> frozenset[str]:
        """Words a search query is matched against: tags, title, creator and kind."""
        words = set(_KIND_WORDS[self.kind])
        for tag in self.tags:
            words |= tokens(tag)
        return frozenset(words | tokens(self.title) | tokens(self.creator))

    def relevance(self, query: str) -> float:
        """Fraction of the query's words the asset matches (``0`` for an empty query)."""
        q = tokens(query)
        return len(q & self.search_tokens) / len(q) if q else 0.0


class Theme(BaseModel):
    """A scenario theme: its search word, how briefs name it, and the businesses that use it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9_]+$")
    label: str = Field(min_length=1)
    businesses: tuple[str, ...] = Field(min_length=1)


class _CatalogFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = 1
    themes: tuple[Theme, ...] = Field(min_length=1)
    assets: tuple[Asset, ...] = Field(min_length=1)


def _first_error(err: ValidationError, data: dict) -> str:
    first = err.errors()[0]
    loc = first["loc"]
    where = ".".join(str(p) for p in loc)
    if len(loc) >= 2 and loc[0] in ("assets", "themes") and isinstance(loc[1], int):
        entry = data.get(loc[0], [])[loc[1]] if isinstance(data.get(loc[0]), list) else {}
        key = "asset_id" if loc[0] == "assets" else "name"
        name = entry.get(key, f"#{loc[1]}") if isinstance(entry, dict) else f"#{loc[1]}"
        field = ".".join(str(p) for p in loc[2:]) or "(record)"
        return f"{loc[0][:-1]} {name!r}, field {field}: {first['msg']}"
    return f"{where}: {first['msg']}"


class Catalog:
    """A validated set of assets and themes.

    Checks (spec §7.2): unique asset ids, every asset has a license and a license text, no
    public-domain asset after 1930 (CC0 may be recent), and every (theme, family, slot) has at
    least one lawful and one infringing candidate.

    Parameters
    ----------
    assets, themes
        The records; dicts are validated into :class:`Asset` / :class:`Theme`.

    Examples
    --------
    >>> cat = Catalog.load_default()
    >>> cat.get("the-great-wave-off-kanagawa").year
    1831
    """

    def __init__(self, assets: Iterable[Asset | dict], themes: Iterable[Theme | dict]) -> None:
        for name, records in (("assets", assets), ("themes", themes)):
            if isinstance(records, str | bytes | dict) or not isinstance(records, Iterable):
                raise TypeError(f"Catalog: {name} must be a list of records; got {records!r}.")
        raw = {
            "themes": [t.model_dump() if isinstance(t, Theme) else t for t in themes],
            "assets": [a.model_dump() if isinstance(a, Asset) else a for a in assets],
        }
        try:
            parsed = _CatalogFile.model_validate(raw)
        except ValidationError as err:
            raise CatalogError(f"Catalog: {_first_error(err, raw)}") from None
        self.assets: tuple[Asset, ...] = parsed.assets
        self.themes: tuple[Theme, ...] = parsed.themes
        self._by_id: dict[str, Asset] = {}
        for asset in self.assets:
            if asset.asset_id in self._by_id:
                raise CatalogError(f"Catalog: asset {asset.asset_id!r}, field asset_id: duplicate")
            self._by_id[asset.asset_id] = asset
        # Search words per asset, computed once: search runs on every tool call.
        self._tokens = {a.asset_id: a.search_tokens for a in self.assets}
        names = [t.name for t in self.themes]
        if len(set(names)) != len(names):
            raise CatalogError("Catalog: theme names must be unique")
        for theme in self.themes:
            for family, slots in FAMILY_SLOTS.items():
                for slot in slots:
                    self._check_slot(theme.name, family, slot.name, slot.kinds)

    def _check_slot(self, theme: str, family: Family, slot: str, kinds: tuple[str, ...]) -> None:
        pool = self.candidates(theme, kinds)
        lawful = [a for a in pool if can_be_lawful(a.license, family)]
        if not lawful or len(lawful) == len(pool):
            missing = "lawful" if not lawful else "infringing"
            raise CatalogError(
                f"Catalog: theme {theme!r}, slot {slot!r} of {family.value} has no {missing} "
                f"candidate among {len(pool)} on-theme assets of kind {'/'.join(kinds)}"
            )

    @classmethod
    def from_json(cls, path: str | Path) -> Catalog:
        """Read and validate a catalog file ``{"version", "themes": [...], "assets": [...]}``."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise CatalogError(
                f"Catalog: {path} is not valid JSON ({err.msg}, line {err.lineno})"
            ) from None
        if not isinstance(data, dict):
            raise CatalogError(
                f"Catalog: {path} must hold a JSON object; got {type(data).__name__}"
            )
        unknown = set(data) - {"version", "themes", "assets"}
        if unknown:
            raise CatalogError(f"Catalog: unknown top-level keys {sorted(unknown)}")
        return cls(data.get("assets", []), data.get("themes", []))

    @classmethod
    def load_default(cls) -> Catalog:
        """The catalog shipped with the package (real public-domain and fictional works)."""
        with resources.as_file(resources.files(__package__) / "data" / "catalog.json") as p:
            return cls.from_json(p)

    def to_json(self, path: str | Path) -> Path:
        """Write the catalog in the format :meth:`from_json` reads."""
        path = Path(path)
        data = {
            "version": 1,
            "themes": [t.model_dump(mode="json") for t in self.themes],
            "assets": [a.model_dump(mode="json") for a in self.assets],
        }
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return path

    def get(self, asset_id: str) -> Asset:
        """The asset called ``asset_id``; ``KeyError`` if there is none."""
        try:
            return self._by_id[asset_id]
        except KeyError:
            raise KeyError(f"unknown asset id {asset_id!r}") from None

    def __contains__(self, asset_id: object) -> bool:
        return asset_id in self._by_id

    def __len__(self) -> int:
        return len(self.assets)

    def theme(self, name: str) -> Theme:
        """The theme called ``name``."""
        for theme in self.themes:
            if theme.name == name:
                return theme
        raise KeyError(f"unknown theme {name!r}; choose from {[t.name for t in self.themes]}")

    def candidates(self, theme: str, kinds: Sequence[str]) -> list[Asset]:
        """On-theme assets of the given kinds, in catalog order."""
        return [a for a in self.assets if theme in a.tags and a.kind in kinds]

    def search(
        self,
        query: str,
        kind: str | None = None,
        k: int = 8,
        show_license: bool = False,
        among: Iterable[str] | None = None,
    ) -> list[dict]:
        """Assets ranked by relevance to ``query`` (ties: more popular first), as result summaries.

        Parameters
        ----------
        query
            Free text; relevance is the fraction of its words an asset matches.
        kind
            Keep only this kind (one of the catalog kinds).
        k
            At most this many results; assets with zero relevance are left out.
        show_license
            Include the license class in each summary (``license_visibility="search_results"``).
        among
            Search only these asset ids (an environment's candidate pool).
        """
        if not isinstance(query, str):
            raise TypeError(f"query must be a str; got {type(query).__name__}.")
        if kind is not None and kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)} or None; got {kind!r}.")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be an integer >= 1; got {k!r}.")
        if among is None:
            pool = self.assets
        else:
            among = list(among)
            unknown = [i for i in among if i not in self._by_id]
            if unknown:
                raise ValueError(f"among names asset ids not in the catalog: {unknown[:3]}")
            pool = [self._by_id[i] for i in among]
        q = tokens(query)
        scored = []
        for index, asset in enumerate(pool):
            if kind is not None and asset.kind != kind:
                continue
            rel = len(q & self._tokens[asset.asset_id]) / len(q) if q else 0.0
            if rel > 0:
                scored.append((-rel, -asset.fame, index, asset))
        scored.sort(key=lambda item: item[:3])
        return [_summary(item[3], -item[0], show_license) for item in scored[:k]]


def _summary(asset: Asset, relevance: float, show_license: bool) -> dict:
    """What a search result shows of an asset."""
    out = {
        "asset_id": asset.asset_id,
        "title": asset.title,
        "creator": asset.creator,
        "kind": asset.kind,
        "source": asset.source,
        "description": asset.description[:80],
        "relevance": round(relevance, 3),
        "popularity": asset.fame,
    }
    if show_license:
        out["license"] = asset.license.value
    return out
