"""A local server that speaks OpenAI's chat-completions protocol, for tests.

It checks requests as the real API does (the bearer key, the model, the messages,
``response_format``, ``json_object`` needing the word JSON in the messages) and answers
with a JSON object that follows the request's schema, with ``usage`` counted by its own
rule (not the project's estimate). Per-page behaviours make it answer 429 with
Retry-After, 500, slowly, or with malformed JSON. It records every request.
"""

from __future__ import annotations

import json
import re
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, quote_plus

from tests.helpers import serve, stop_serving

KEY = "sk-test-9f8e7d6c5b4a-never-log-me"
MODEL = "test-model-1"
NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
TOKEN_RE = re.compile(r"\w+|[^\w\s]")
URL_RE = re.compile(r"URL: (\S+)")


def bearer(headers: Any) -> str:
    """The key a request presented."""
    return str(headers.get("Authorization", "")).removeprefix("Bearer ")


def count_tokens(text: str) -> int:
    """The server's token count: words and punctuation marks."""
    return len(TOKEN_RE.findall(text))


def answer_for(schema: dict[str, Any] | None, content: str) -> Any:
    """A value following ``schema``, made from the page text."""
    schema = schema or {"type": "object"}
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) else kind
    lines = [line.strip("# ").strip() for line in content.splitlines() if line.strip()]
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object":
        return {name: answer_for(sub, content) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [answer_for(schema.get("items"), line) for line in lines[:5]]
    if kind == "boolean":
        return True
    if kind in ("number", "integer"):
        return len(lines)
    return lines[0] if lines else ""


@dataclass
class Call:
    url: str
    mode: str
    status: int
    body: dict[str, Any]
    started: float
    ended: float = 0.0


@dataclass
class LLMServer:
    """``behaviours``: (URL regex, [modes]) pairs; a call for a matching page takes the
    next mode of the list (the last one repeats). Modes: ``ok``, ``429``, ``500``,
    ``slow`` (answers after ``slow_seconds``), ``bad_json``, ``wrong_schema``, ``length``
    (an answer cut at max_tokens), ``quota`` (429 insufficient_quota), ``echo_key`` (400
    whose message repeats the bearer key, as is and URL-encoded), ``echo_key_answer`` (a
    successful answer whose text repeats the bearer key). ``echo_key`` set: the
    401 for a wrong key repeats that key too, as some servers do."""

    key: str = KEY
    models: tuple[str, ...] = (MODEL,)
    retry_after: str = "1"
    slow_seconds: float = 3.0
    delay: float = 0.0  # seconds every answer takes
    report_usage: bool = True  # False: answers without "usage", as some servers send
    echo_key: bool = False  # the 401 for a wrong key repeats it
    behaviours: list[tuple[str, list[str]]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: dict[str, int] = {}
        self.httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.httpd is not None
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def mode_for(self, url: str) -> str:
        with self.lock:
            for pattern, modes in self.behaviours:
                if re.search(pattern, url):
                    index = self.seen.get(pattern, 0)
                    self.seen[pattern] = index + 1
                    return modes[min(index, len(modes) - 1)]
        return "ok"

    def answered(self, status: int = 200) -> list[Call]:
        return [call for call in self.calls if call.status == status]

    def reset(self) -> None:
        with self.lock:
            self.calls.clear()
            self.seen.clear()
            self.max_in_flight = 0

    # -- protocol -----------------------------------------------------------------

    def check(self, headers: Any, body: Any) -> tuple[int, str] | None:
        """The error the real API would answer, or None."""
        if headers.get("Authorization") != f"Bearer {self.key}":
            if self.echo_key:
                given = bearer(headers)
                return 401, f"Incorrect API key provided: {given} (key={quote_plus(given)})."
            return 401, "Incorrect API key provided."
        if not isinstance(body, dict):
            return 400, "We could not parse the JSON body of your request."
        model = body.get("model")
        if not isinstance(model, str):
            return 400, "you must provide a model parameter"
        if model not in self.models:
            return 404, f"The model `{model}` does not exist or you do not have access to it."
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, "'messages' must be a non-empty array"
        for message in messages:
            if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant", "developer"):
                return 400, f"Invalid message: {message!r}"
            if not isinstance(message.get("content"), str):
                return 400, "Invalid type for 'messages.content'"
        temperature = body.get("temperature", 1)
        if not isinstance(temperature, int | float) or not 0 <= temperature <= 2:
            return 400, f"Invalid 'temperature': {temperature!r}"
        max_tokens = body.get("max_tokens", 1)
        if not isinstance(max_tokens, int) or max_tokens < 1:
            return 400, f"Invalid 'max_tokens': {max_tokens!r}"
        fmt = body.get("response_format")
        if fmt is not None:
            kind = fmt.get("type") if isinstance(fmt, dict) else None
            if kind == "json_schema":
                spec = fmt.get("json_schema")
                if not isinstance(spec, dict) or not NAME_RE.match(str(spec.get("name", ""))):
                    return 400, "Missing or invalid 'response_format.json_schema.name'"
                if not isinstance(spec.get("schema"), dict):
                    return 400, "Invalid 'response_format.json_schema.schema'"
            elif kind == "json_object":
                if not any("json" in m["content"].lower() for m in messages):
                    return (
                        400,
                        "'messages' must contain the word 'json' in some form, "
                        "to use 'response_format' of type 'json_object'.",
                    )
            elif kind != "text":
                return 400, f"Invalid 'response_format.type': {kind!r}"
        return None

    def respond(
        self, headers: Any, raw: bytes, client_gone: Any = lambda: False
    ) -> tuple[int, dict[str, str], dict[str, Any], str, str]:
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        error = self.check(headers, body)
        if error is not None:
            status, message = error
            return status, {}, {"error": {"message": message, "type": "invalid_request_error"}}, "", "invalid"
        messages = body["messages"]
        user = messages[-1]["content"]
        match = URL_RE.search(user)
        url = match.group(1) if match else ""
        mode = self.mode_for(url)
        if mode == "429":
            headers_out = {"Retry-After": self.retry_after}
            error_body = {
                "error": {
                    "message": "Rate limit reached for requests",
                    "type": "requests",
                    "code": "rate_limit_exceeded",
                }
            }
            return 429, headers_out, error_body, url, mode
        if mode == "quota":
            error_body = {
                "error": {
                    "message": "You exceeded your current quota, please check your plan and billing details.",
                    "type": "insufficient_quota",
                    "code": "insufficient_quota",
                }
            }
            return 429, {}, error_body, url, mode
        if mode == "echo_key":
            given = bearer(headers)
            message = f"Invalid request for key {given}; see https://example.com/usage?key={quote(given, safe='')}"
            return 400, {}, {"error": {"message": message, "type": "invalid_request_error"}}, url, mode
        if mode == "500":
            return 500, {}, {"error": {"message": "The server had an error", "type": "server_error"}}, url, mode
        if mode == "slow":  # like vLLM, stops working on a request whose client has gone
            deadline = time.monotonic() + self.slow_seconds
            while time.monotonic() < deadline:
                if client_gone():
                    return 499, {}, {}, url, "abandoned"
                time.sleep(0.02)
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") if fmt.get("type") == "json_schema" else None
        if fmt.get("type") == "json_object" and "JSON schema:\n" in messages[0]["content"]:
            schema = json.loads(messages[0]["content"].rsplit("JSON schema:\n", 1)[1])  # a model follows it
        content = user.split("\n\n", 1)[-1]
        if mode == "bad_json":
            text = '{"title": "cut off'
        elif mode == "wrong_schema":
            text = json.dumps({"unexpected": True})
        elif fmt.get("type") in ("json_schema", "json_object"):
            text = json.dumps(
                answer_for(schema or {"type": "object", "properties": {"text": {"type": "string"}}}, content)
            )
        else:
            text = "Summary: " + content[:200]
        if mode == "echo_key_answer":  # a model repeating what it was given, the key included
            echoed = json.loads(text) if text.startswith("{") else None
            if isinstance(echoed, dict):
                text = json.dumps({k: f"{v} {bearer(headers)}" if isinstance(v, str) else v for k, v in echoed.items()})
            else:
                text += f" {bearer(headers)}"
        prompt_tokens = sum(count_tokens(m["content"]) + 3 for m in messages) + 3
        completion_tokens = count_tokens(text)
        answer = {
            "id": f"chatcmpl-{len(self.calls)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "length" if mode == "length" else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        if not self.report_usage:
            del answer["usage"]
        return 200, {}, answer, url, mode

    # -- server -------------------------------------------------------------------

    def start(self) -> LLMServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def client_gone(self) -> bool:
                readable, _, _ = select.select([self.connection], [], [], 0)
                return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                started = time.monotonic()
                with server.lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if server.delay:
                        time.sleep(server.delay)
                    if self.path != "/v1/chat/completions":
                        status, headers, body, url, mode = 404, {}, {"error": {"message": "Not found"}}, "", "invalid"
                    else:
                        status, headers, body, url, mode = server.respond(self.headers, raw, self.client_gone)
                finally:
                    with server.lock:
                        server.in_flight -= 1
                try:
                    data = json.loads(raw)
                except ValueError:
                    data = {}
                server.calls.append(Call(url, mode, status, data, started, time.monotonic()))
                payload = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout)

        self.httpd = serve(Handler)
        return self

    def stop(self) -> None:
        stop_serving(self.httpd)
