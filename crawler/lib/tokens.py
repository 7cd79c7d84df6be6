"""Token estimates without a tokenizer: what a page would cost an LLM, offline.

No tokenizer is downloaded at run time. The estimate is OpenAI's rule of thumb, one
token for about four bytes of UTF-8 text (English prose: 4 to 4.5 characters a token;
code and markdown are denser, other scripts use more bytes per character). The
extraction stage scales it by the ratio of the tokens an endpoint reported to the
tokens estimated for the same requests (:func:`calibration`), so savings are reported
in the endpoint's own tokens when the run made at least one call.
"""

from __future__ import annotations

#: tokens a chat message costs beyond its text (role, separators), as OpenAI counts
MESSAGE_OVERHEAD = 4


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is.

    >>> estimate_tokens(""), estimate_tokens("abcd"), estimate_tokens("abcde")
    (0, 1, 2)
    >>> estimate_tokens("é" * 4)  # two bytes each
    2
    """
    return (len(text.encode("utf-8")) + 3) // 4


def estimate_chat_tokens(messages: list[dict[str, str]]) -> int:
    """Tokens of a chat-completions request's messages.

    >>> estimate_chat_tokens([{"role": "user", "content": "abcd" * 10}])
    17
    """
    return sum(estimate_tokens(m.get("content", "")) + MESSAGE_OVERHEAD for m in messages) + 3


def calibration(reported: int, estimated: int) -> float:
    """The factor that turns estimates into the endpoint's tokens: reported over
    estimated for the same requests, 1.0 when nothing was measured.

    >>> calibration(1200, 1000), calibration(0, 0), calibration(5, 0)
    (1.2, 1.0, 1.0)
    """
    if reported <= 0 or estimated <= 0:
        return 1.0
    return round(reported / estimated, 4)
