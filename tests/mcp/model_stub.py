"""A local stand-in for the model APIs the agent CLIs call (Anthropic Messages, OpenAI Responses,
OpenAI Chat Completions), streaming one fixed answer, so that the real CLIs run end to end on
a machine that reaches no model. It records every request it gets."""

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = "DONE: the brief was read"


class ModelStub:
    """Serves on 127.0.0.1 in a thread; `url` is its base, `requests` what it was sent."""

    def __init__(self, answer=ANSWER):
        self.answer = answer
        self.requests = []
        self.ids = itertools.count(1)
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_HEAD(self):
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self):
                if self.path.split("?")[0].endswith("/models"):
                    return self.json(200, {"object": "list", "data": [{"id": "stub-model", "object": "model"}]})
                self.json(404, {"error": {"message": "not here", "type": "not_found_error"}})

            def do_POST(self):
                size = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(size) or b"{}")
                path = self.path.split("?")[0]
                stub.requests.append((path, body))
                if path.endswith("/messages/count_tokens"):
                    return self.json(200, {"input_tokens": 10})
                if path.endswith("/messages"):
                    return self.events(stub.anthropic(body.get("model", "stub")))
                if path.endswith("/responses"):
                    return self.events(stub.responses(body.get("model", "stub")))
                if path.endswith("/chat/completions"):
                    return self.events(stub.chat(body.get("model", "stub")))
                self.json(404, {"error": {"message": "not here", "type": "not_found_error"}})

            def json(self, code, value):
                data = json.dumps(value).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def events(self, events):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for name, data in events:
                    head = f"event: {name}\n" if name else ""
                    payload = data if isinstance(data, str) else json.dumps(data)
                    self.wfile.write(f"{head}data: {payload}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def anthropic(self, model):
        """Messages API events for one text answer."""
        usage = {"input_tokens": 10, "output_tokens": 6}
        message = {"id": f"msg_{next(self.ids)}", "type": "message", "role": "assistant", "model": model,
                   "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
        return [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": self.answer}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": {"output_tokens": 6}}),
            ("message_stop", {"type": "message_stop"}),
        ]

    def responses(self, model):
        """Responses API events for one text answer."""
        n = next(self.ids)
        response = {"id": f"resp_{n}", "object": "response", "created_at": 0, "model": model,
                    "output": [], "status": "in_progress"}
        part = {"type": "output_text", "text": self.answer, "annotations": []}
        item = {"id": f"msg_{n}", "type": "message", "status": "completed", "role": "assistant", "content": [part]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 6,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 16}
        events = [
            {"type": "response.created", "response": response},
            {"type": "response.output_item.added", "output_index": 0, "item": dict(item, status="in_progress", content=[])},
            {"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0,
             "delta": self.answer},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": dict(response, status="completed", output=[item], usage=usage)},
        ]
        for seq, event in enumerate(events):
            event["sequence_number"] = seq
        return [(e["type"], e) for e in events]

    def chat(self, model):
        """Chat Completions stream chunks for one text answer."""
        n = next(self.ids)

        def chunk(delta, finish=None):
            return (None, {"id": f"chat_{n}", "object": "chat.completion.chunk", "created": 0, "model": model,
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

        return [chunk({"role": "assistant", "content": ""}), chunk({"content": self.answer}),
                chunk({}, "stop"), (None, "[DONE]")]
