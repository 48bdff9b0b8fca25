"""Policy PDFs print every language (issue 18): embedded Noto fonts, Arabic shaped by HarfBuzz,
Markdown tables drawn as tables, and the organization's name and logo on every page."""

from __future__ import annotations

import datetime as dt
import io
import re
import struct
import zlib

import pypdf
import pytest

from compliance_core.areas.policies import PolicyDocument
from compliance_pdf import fonts
from compliance_pdf.markdown import blocks
from compliance_pdf.policies import MAX_CELLS, MAX_COLUMNS, FpdfPolicies

AT = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
LANGUAGES = {
    "Polish": "Zażółć gęślą jaźń: polityka bezpieczeństwa informacji",
    "Greek": "Η πολιτική ασφαλείας πληροφοριών ισχύει για όλους",
    "Cyrillic": "Политика информационной безопасности действует для всех",
    "Arabic": "يجب على جميع الموظفين حماية البيانات الشخصية",
}
TABLE = "| Control | Owner | Due |\n|:--|:-:|--:|\n| Backups | Ana | 2026-03 |\n| Αντίγραφα | Кирилл | 2026-04 |\n"


def _png(width: int = 8, height: int = 4) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xc8\x1e\x1e" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _document(content: str, **extra: object) -> PolicyDocument:
    return PolicyDocument(name="Policy", description="", version=1, content=content, published_at=AT, **extra)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def renderer() -> FpdfPolicies:
    return FpdfPolicies()


def _pages(data: bytes) -> list[pypdf.PageObject]:
    return list(pypdf.PdfReader(io.BytesIO(data)).pages)


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_each_language_round_trips_through_text_extraction(renderer: FpdfPolicies, language: str) -> None:
    sentence = LANGUAGES[language]
    data = renderer.render(
        "Policy", [_document(f"# {sentence}\n\n{sentence}\n\n- {sentence}", organization=sentence)], AT
    )
    text = _pages(data)[0].extract_text()
    lines = [line.strip() for line in text.splitlines()]
    assert lines[0] == sentence and lines.count(sentence) == 3, text  # the page head, the heading, the paragraph
    assert sum(sentence in line for line in lines) == 4, text  # and the item, beside its marker
    assert "?" not in text


def test_every_language_in_one_document(renderer: FpdfPolicies) -> None:
    content = "\n\n".join(LANGUAGES.values())
    text = _pages(renderer.render("Policy", [_document(content)], AT))[0].extract_text()
    assert all(sentence in text.splitlines() for sentence in LANGUAGES.values()), text


def test_styled_arabic_reads_in_logical_order(renderer: FpdfPolicies) -> None:
    """Each styled run would be ordered on its own and the runs laid left to right (the sentence's
    parts in the wrong order): a right-to-left block is one run."""
    sentence = "يجب على جميع الموظفين **حماية** البيانات الشخصية"
    text = _pages(renderer.render("Policy", [_document(sentence)], AT))[0].extract_text()
    assert sentence.replace("**", "") in text.splitlines(), text


def test_the_fonts_are_embedded(renderer: FpdfPolicies) -> None:
    page = _pages(renderer.render("Policy", [_document(LANGUAGES["Arabic"] + "\n\n" + LANGUAGES["Greek"])], AT))[0]
    names = set()
    for font in page["/Resources"]["/Font"].values():
        descendant = font.get_object()["/DescendantFonts"][0].get_object()
        assert "/FontFile2" in descendant["/FontDescriptor"]  # the font program travels in the PDF
        names.add(str(descendant["/BaseFont"]))
    assert any("NotoSansArabic" in name for name in names) and any(
        re.search(r"\+NotoSans(?!Arabic)", name) for name in names
    ), names


def test_a_markdown_table_is_a_block_of_rows() -> None:
    (table,) = blocks(TABLE)
    assert table.kind == "table" and table.mark == "LCR"
    assert table.rows == (
        ("Control", "Owner", "Due"),
        ("Backups", "Ana", "2026-03"),
        ("Αντίγραφα", "Кирилл", "2026-04"),
    )


def test_a_table_is_drawn_as_ruled_cells_read_in_row_order(renderer: FpdfPolicies) -> None:
    page = _pages(renderer.render("Policy", [_document("Before\n\n" + TABLE + "\nAfter")], AT))[0]
    lines = [line.strip() for line in page.extract_text().splitlines()]
    start = lines.index("Control Owner Due")
    assert lines[start - 1 : start + 4] == [
        "Before",
        "Control Owner Due",
        "Backups Ana 2026-03",
        "Αντίγραφα Кирилл 2026-04",
        "After",
    ]
    rectangles = re.findall(rb"[\d.]+ [\d.]+ [\d.]+ [\d.]+ re [SB]", page.get_contents().get_data())
    assert len(rectangles) == 9  # three rows of three cells, each ruled


def test_a_table_too_wide_for_the_page_prints_as_written(renderer: FpdfPolicies) -> None:
    columns = MAX_COLUMNS + 1
    wide = "|" + "|".join(f"c{n}" for n in range(columns)) + "|\n|" + "---|" * columns + "\n|" + "x|" * columns
    page = _pages(renderer.render("Policy", [_document(wide)], AT))[0]
    assert f"c{columns - 1}" in page.extract_text()
    assert not re.search(rb" re S", page.get_contents().get_data())


@pytest.mark.parametrize(
    "table",
    [
        "| a | b |\n|---|---|\n| " + "word " * 3000 + "| end |\n",  # a row taller than a page
        "| a | b |\n|---|---|\n" + "| x | y |\n" * (MAX_CELLS // 2),  # more cells than are drawn
    ],
)
def test_a_table_that_cannot_be_drawn_as_cells_prints_as_written(renderer: FpdfPolicies, table: str) -> None:
    data = renderer.render("Policy", [_document(table)], AT)
    pages = _pages(data)
    assert all(not re.search(rb" re S", page.get_contents().get_data()) for page in pages)
    text = "".join(page.extract_text() for page in pages)
    assert "a | b" in text and ("end" in text or "x | y" in text)


def test_the_organization_and_its_logo_head_every_page(renderer: FpdfPolicies) -> None:
    long = "\n\n".join(f"Paragraph {n} of a long policy." for n in range(120))
    documents = [_document(long, organization="Acme Sp. z o.o.", logo=_png())] * 2
    pages = _pages(renderer.render("Acme: policies", documents, AT))
    assert len(pages) > 3
    for page in pages:
        assert page.extract_text().splitlines()[0].strip() == "Acme Sp. z o.o."
        assert len(page.images) == 1
    assert pages[0].images[0].image.size == (8, 4)


def test_a_long_organization_name_is_cut_to_the_head_of_the_page(renderer: FpdfPolicies) -> None:
    name = "Przedsiębiorstwo " * 12
    page = _pages(renderer.render("Policy", [_document("Text", organization=name.strip(), logo=_png())], AT))[0]
    head = page.extract_text().splitlines()[0].strip()
    assert head.endswith("…") and name.startswith(head[:-1])


def test_a_logo_that_will_not_decode_leaves_the_pdf_without_it(renderer: FpdfPolicies) -> None:
    page = _pages(renderer.render("Policy", [_document("Text", organization="Acme", logo=b"\x89PNG broken")], AT))[0]
    assert "Text" in page.extract_text() and not page.images


def test_fonts_are_parsed_once_per_renderer(renderer: FpdfPolicies, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker keeps one renderer: its renders read no font file and each is whole on its own
    (fpdf2 cuts the embedded subset out of the font in place, so a shared face would leak)."""

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a font was loaded again")

    monkeypatch.setattr(fonts.Path, "read_bytes", refuse)
    monkeypatch.setattr(fonts.FPDF, "add_font", refuse)
    first = renderer.render("Policy", [_document(LANGUAGES["Polish"] + " **bold**")], AT)
    second = renderer.render("Policy", [_document(LANGUAGES["Greek"] + " *italic*")], AT)
    again = renderer.render("Policy", [_document(LANGUAGES["Polish"] + " **bold**")], AT)
    assert first == again
    assert LANGUAGES["Greek"] in _pages(second)[0].extract_text()
