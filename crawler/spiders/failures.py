"""Why a download failed, said in one line, and whether it failed for its size."""

from __future__ import annotations

from scrapy.exceptions import DownloadCancelledError, IgnoreRequest
from twisted.internet.defer import CancelledError


def too_large(error: BaseException | None) -> bool:
    """Whether a download failed for its size: Scrapy cancels a body that grows past
    ``DOWNLOAD_MAXSIZE`` (``DownloadCancelledError`` with no message: Twisted's
    ``CancelledError`` wrapped), refuses one whose Content-Length is larger
    (``DownloadCancelledError`` saying so), and HttpCompressionMiddleware ignores one
    whose decompressed size is (``IgnoreRequest`` naming ``DOWNLOAD_MAXSIZE``)."""
    if isinstance(error, (CancelledError, DownloadCancelledError)):
        return True
    return isinstance(error, IgnoreRequest) and "DOWNLOAD_MAXSIZE" in str(error)


def failure_reason(error: BaseException | None) -> str:
    """One line saying why a page failed; never empty.

    >>> failure_reason(DownloadCancelledError())
    'cancelled: response larger than DOWNLOAD_MAXSIZE (DownloadCancelledError)'
    >>> failure_reason(ValueError("bad\\ncall log"))
    'ValueError: bad'
    >>> failure_reason(TimeoutError())
    'TimeoutError'
    """
    name = type(error).__name__
    message = next(iter(str(error).strip().splitlines()), "").strip()  # a browser's error has a call log
    if not message and isinstance(error, (CancelledError, DownloadCancelledError)):
        # a timeout is a DownloadTimeoutError: what cancels a download without a word
        # is the body growing past DOWNLOAD_MAXSIZE
        return f"cancelled: response larger than DOWNLOAD_MAXSIZE ({name})"
    return f"{name}: {message}" if message else name
