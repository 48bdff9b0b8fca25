"""The fonts a policy PDF embeds: Noto Sans for Latin, Greek and Cyrillic, Noto Sans Arabic for
Arabic, from the ``fontpkg-noto-sans`` and ``fontpkg-noto-sans-arabic`` wheels (OFL-1.1), so
``pip install`` alone gives a renderer that prints every language those scripts write.

Both wheels ship variable fonts. The PDF embeds their default instance (regular weight), the
variation tables removed once per worker; making a static bold instance with fontTools takes
about ten seconds a face, too slow for a worker's start.
Bold is the regular face drawn by stroking the outline as well as filling it (text render mode 2,
so bold and regular text share one embedded subset), the synthetic
bold PDF readers themselves use; italic is Noto Sans Italic's own design; Arabic has no italic.

Arabic is shaped by HarfBuzz (``uharfbuzz``, through fpdf2's text shaping), which also orders a
right-to-left run for display. A block holding Arabic is written with Noto Sans Arabic as its font
(the face has Latin letters, digits and spaces too), Noto Sans its fallback for what it lacks; so
an Arabic sentence is one run and text extraction (pypdf) reads it back in logical order. The
``ccmp`` feature stays off: Noto Sans Arabic uses it to split each letter into a dotless body and
its dots, glyphs that map to no character, which extraction would read as garbage.

Fonts are parsed once per ``Typeface`` (a worker keeps one for its life): each render gets a
fresh copy of the parsed face whose font program is reopened from bytes held in memory, because
fpdf2 cuts the embedded subset out of that program in place when it writes a PDF.
"""

from __future__ import annotations

import copy
import io
import re
from pathlib import Path

import fontpkg_noto_sans
import fontpkg_noto_sans_arabic
from fontTools import ttLib
from fpdf import FPDF
from fpdf.enums import TextEmphasis, TextMode
from fpdf.fonts import SubsetMap, TTFFont

__all__ = ["SANS", "ARABIC", "Typeface", "family", "needs_shaping"]

SANS = "noto-sans"
ARABIC = "noto-sans-arabic"
_FILES: dict[tuple[str, str], Path] = {
    (SANS, ""): Path(fontpkg_noto_sans.ROOT) / "files" / "NotoSans[wdth,wght].ttf",
    (SANS, "I"): Path(fontpkg_noto_sans.ROOT) / "files" / "NotoSans-Italic[wdth,wght].ttf",
    (ARABIC, ""): Path(fontpkg_noto_sans_arabic.ROOT) / "files" / "NotoSansArabic[wdth,wght].ttf",
}
_SHAPED = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
"""Hebrew, Arabic, Syriac, Thaana and N'Ko, and Arabic presentation forms: scripts written right
to left, which need shaping and reordering. Other text is laid out without HarfBuzz (faster)."""
_ARABIC = re.compile("[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff]")
_BOLD_STROKE = 0.03
"""Outline width of synthetic bold, as a fraction of the font size."""
_LINE_WIDTH = 0.2
"""fpdf2's default line width (mm), which rules and table borders use."""


_UNEMBEDDED = ("fvar", "gvar", "avar", "cvar", "HVAR", "VVAR", "MVAR", "STAT", "GDEF", "GSUB", "GPOS")
"""Tables the embedded program goes without: the variations, and the layout tables fpdf2 drops
from every subset it embeds (HarfBuzz shapes from the font file itself, which keeps them)."""


def _default_instance(path: Path) -> bytes:
    """The variable font's program without the tables a PDF does not use: its default instance
    as a static font (the outlines and metrics are the default's already). Cutting a subset out
    of it takes a fraction of what the whole variable font takes (reading its layout tables alone
    cost a render over half a second)."""
    font = ttLib.TTFont(io.BytesIO(path.read_bytes()), lazy=True, recalcTimestamp=False)
    for tag in _UNEMBEDDED:
        if tag in font:
            del font[tag]
    program = io.BytesIO()
    font.save(program)
    return program.getvalue()


def needs_shaping(text: str) -> bool:
    return _SHAPED.search(text) is not None


def family(text: str) -> str:
    """The font a block is written in: Noto Sans Arabic when it holds Arabic, else Noto Sans."""
    return ARABIC if _ARABIC.search(text) else SANS


class Typeface:
    """The embedded faces, parsed once, installed into each new document by ``install``."""

    def __init__(self) -> None:
        scratch = FPDF()
        self._programs: dict[tuple[str, str], bytes] = {}
        self._faces: dict[tuple[str, str], TTFFont] = {}
        for (name, style), path in _FILES.items():
            self._programs[name, style] = _default_instance(path)
            scratch.add_font(name, style, path)
            face = scratch.fonts[f"{name}{style}"]
            assert isinstance(face, TTFFont)
            self._faces[name, style] = face

    def install(self, pdf: FPDF) -> None:
        """Give ``pdf`` the regular face of Noto Sans, and no shaping yet.

        The other faces are added when ``style`` first selects them: fpdf2 embeds every font a
        document holds, and cutting the subset out of a variable font costs a tenth of a second
        even when no glyph of it is used. Noto Sans Arabic is added, as Noto Sans's fallback and
        the other way round, with the first block that holds Arabic."""
        self._add(pdf, SANS, "")
        pdf.set_text_shaping(False)

    def _add(self, pdf: FPDF, name: str, emphasis: str) -> None:
        style = "I" if "I" in emphasis else ""
        face = self._faces[name, style]
        key = f"{name}{emphasis}"
        font = copy.copy(face)
        font.ttfont = ttLib.TTFont(io.BytesIO(self._programs[name, style]), recalcTimestamp=False, lazy=True)
        font.fontkey = key
        font.emphasis = TextEmphasis.coerce(emphasis)
        font.desc = copy.copy(face.desc)  # a PDF object: each font writes its own
        font.i = len(pdf.fonts) + 1
        font.subset = SubsetMap(font)
        font.missing_glyphs = []
        font.biggest_size_pt = 0
        pdf.fonts[key] = font

    def style(self, pdf: FPDF, name: str, bold: bool = False, italic: bool = False, size: float = 11) -> None:
        """Select a face; bold strokes the outline (synthetic bold) of the regular face, so bold
        and regular text share one embedded subset; Arabic ignores italic."""
        emphasis = "I" if italic and name == SANS else ""
        if name == ARABIC and ARABIC not in pdf.fonts:  # the first Arabic: each face falls back on the other
            self._add(pdf, ARABIC, "")
            pdf.set_fallback_fonts([SANS, ARABIC], exact_match=False)
        if f"{name}{emphasis}" not in pdf.fonts:
            self._add(pdf, name, emphasis)
        pdf.set_font(name, emphasis, size)
        if bold:
            pdf.text_mode = TextMode.FILL_STROKE
            pdf.set_line_width(size * _BOLD_STROKE / pdf.k)
        elif pdf.text_mode is not TextMode.FILL:
            # fpdf2 writes ``2 Tr`` into the bold text object but never the ``0 Tr`` back, and a
            # text render mode outlasts its text object: end it here, or all that follows is bold
            pdf.text_mode = TextMode.FILL
            pdf._out("0 Tr")
            pdf.set_line_width(_LINE_WIDTH)

    @staticmethod
    def shaping(pdf: FPDF, text: str) -> None:
        """Shape with HarfBuzz only the text that needs it (right-to-left scripts)."""
        if needs_shaping(text):
            pdf.set_text_shaping(True, features={"ccmp": False})
        else:
            pdf.set_text_shaping(False)
