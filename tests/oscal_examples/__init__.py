"""A small OSCAL catalog and profile written for the tests (not NIST's text), in the shapes
NIST publishes: a family with a control, an enhancement and a withdrawn control, and a
CSF-like function with a category and a subcategory."""

from __future__ import annotations

from pathlib import Path

from compliance_core.areas.frameworks.catalogue import Frameworks, FrameworkSource, PublishedFile, git_blob_id

HERE = Path(__file__).parent


def published(name: str) -> PublishedFile:
    return PublishedFile(path=f"examples/{name}", git_blob=git_blob_id((HERE / name).read_bytes()))


def example_source() -> FrameworkSource:
    return FrameworkSource(
        id="example",
        name="Example framework",
        version="1.0",
        publisher="the tests",
        repository="https://example.com/oscal",
        commit="0" * 40,
        catalog=published("example_catalog.json"),
        baselines=(("low", published("example_low_profile.json")),),
    )


def example_frameworks() -> Frameworks:
    """The ``frameworks`` setting of a platform whose catalogue holds the example framework."""
    return Frameworks(directory=HERE, sources=(example_source(),))
