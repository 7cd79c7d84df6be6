"""A local server speaking OpenAI's ``POST /v1/embeddings`` for tests (no internet)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from crawler.lib.featurehash import hashed_vector
from tests.helpers import serve, stop_serving


class EmbeddingsServer:
    """Answers with feature-hashing vectors, in reverse index order (clients must sort
    by ``index``). ``fail_next`` holds statuses to answer with first (429, 500...).
    ``requests`` records each request's JSON body and Authorization header."""

    def __init__(self, dimensions: int = 32) -> None:
        self.dimensions = dimensions
        self.fail_next: list[int] = []
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> EmbeddingsServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with owner.lock:
                    owner.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                    status = owner.fail_next.pop(0) if owner.fail_next else 200
                if status != 200:
                    payload = json.dumps({"error": {"message": f"status {status}", "type": "test"}}).encode()
                    self.send_response(status)
                    self.send_header("Retry-After-Ms", "5")
                elif self.path != "/v1/embeddings":
                    payload, status = b'{"error": {"message": "not found"}}', 404
                    self.send_response(404)
                else:
                    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    dims = body.get("dimensions") or owner.dimensions
                    data = [
                        {"object": "embedding", "index": i, "embedding": hashed_vector(t, dims)}
                        for i, t in enumerate(texts)
                    ]
                    payload = json.dumps(
                        {
                            "object": "list",
                            "data": data[::-1],
                            "model": body["model"],
                            "usage": {"prompt_tokens": 1, "total_tokens": 1},
                        }
                    ).encode()
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = serve(Handler)
        return self

    def stop(self) -> None:
        stop_serving(self.server)
