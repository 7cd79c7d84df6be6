"""What a response body really is: binary content served as HTML, text in another
encoding than the one declared. Pure functions over bytes and text."""

from __future__ import annotations

import codecs

#: how much of a body the binary check reads
SNIFF_BYTES = 4096
#: file signatures at the start of a body: never an HTML page
MAGIC_NUMBERS = (
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"%PDF-", "PDF"),
    (b"PK\x03\x04", "ZIP"),
    (b"PK\x05\x06", "ZIP"),
    (b"\x1f\x8b", "gzip"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"RIFF", "RIFF (WebP, WAV, AVI)"),
    (b"\x7fELF", "ELF"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"Rar!\x1a\x07", "RAR"),
    (b"OggS", "Ogg"),
    (b"wOFF", "WOFF"),
    (b"wOF2", "WOFF2"),
    (b"\x00asm", "WebAssembly"),
)
#: C0 control bytes no text encoding of a web page uses (tab, line feed, vertical tab,
#: form feed, carriage return and escape, for ISO-2022, are text); DEL too
CONTROL_BYTES = frozenset(range(0x20)) - {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1B} | {0x7F}
#: a body whose first bytes have more control bytes than this share is binary
#: (random bytes: about 10%)
MAX_CONTROL_SHARE = 0.02
UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_CONTROL = bytes(sorted(CONTROL_BYTES))


def binary_reason(body: bytes) -> str | None:
    """Why ``body`` is binary content rather than a page, or ``None`` if it is text.

    >>> binary_reason(b"<html><body>caf\\xc3\\xa9</body></html>") is None
    True
    >>> binary_reason(b"\\x89PNG\\r\\n\\x1a\\n...")
    'PNG signature'
    >>> binary_reason(b"<p>\\x00</p>")
    'NUL byte'
    >>> binary_reason(bytes(range(1, 256)) * 4)
    'control bytes: 10% of the first 1020'
    >>> binary_reason("<p>UTF-16 text</p>".encode("utf-16")) is None
    True
    """
    head = body[:SNIFF_BYTES]
    if head.startswith(UTF16_BOMS):  # decoded by its byte order mark; NULs are its text
        return None
    for magic, name in MAGIC_NUMBERS:
        if head.startswith(magic):
            return f"{name} signature"
    if b"\x00" in head:
        return "NUL byte"
    controls = len(head) - len(head.translate(None, _CONTROL))  # counted in C
    if head and controls / len(head) > MAX_CONTROL_SHARE:
        return f"control bytes: {controls / len(head):.0%} of the first {len(head)}"
    return None


#: a text decoded as UTF-8 whose non-ASCII bytes became U+FFFD at least this often was
#: written in another encoding (one stray byte in a UTF-8 page is not)
MIN_REPLACED_SHARE = 0.5
FALLBACK_ENCODING = "cp1252"  # what browsers read for latin-1 and undeclared Western pages
UTF8_REPLACEMENT = "\ufffd".encode()
HIGH_BYTES = bytes(range(0x80, 0x100))


def better_encoding(body: bytes, encoding: str, text: str) -> str | None:
    """An encoding that decodes ``body`` better than the declared ``encoding`` did
    (into ``text``), or ``None`` when the declared one is right. Valid UTF-8 with
    non-ASCII bytes wins, because text in a legacy encoding is almost never valid UTF-8
    by chance; a body that became mostly U+FFFD and is not UTF-8 is taken as ``cp1252``.

    >>> latin = "Déjà vu".encode("cp1252")
    >>> better_encoding(latin, "utf-8", latin.decode("utf-8", "replace"))
    'cp1252'
    >>> utf8 = "Déjà vu".encode()
    >>> better_encoding(utf8, "cp1252", utf8.decode("cp1252"))
    'utf-8'
    >>> one_stray = "Déjà vu, ça coûte".encode() + b" \\xe9"
    >>> better_encoding(one_stray, "utf-8", one_stray.decode("utf-8", "replace")) is None
    True
    >>> better_encoding(b"plain ascii", "utf-8", "plain ascii") is None
    True
    """
    if body.isascii():
        return None
    non_ascii = len(body) - len(body.translate(None, HIGH_BYTES))
    try:
        declared = codecs.lookup(encoding).name
    except LookupError:
        return None
    replaced = max(0, text.count("\ufffd") - body.count(UTF8_REPLACEMENT))
    if declared != "utf-8":
        if _valid_utf8(body):
            return "utf-8"
        if replaced / non_ascii >= MIN_REPLACED_SHARE and declared != FALLBACK_ENCODING:
            return FALLBACK_ENCODING
        return None
    if replaced / non_ascii >= MIN_REPLACED_SHARE:
        return FALLBACK_ENCODING
    return None


def _valid_utf8(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
