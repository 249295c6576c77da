"""A local stand-in for the model APIs the agent CLIs call (Anthropic Messages, OpenAI Responses,
OpenAI Chat Completions), streaming one fixed answer, so that the real CLIs run end to end on
a machine that reaches no model. It records every request it gets.

A conversation that names `WRITE-PROBE /some/path` is first answered with a call to the CLI's
own tool for writing a file there (Claude Code's `Write`, Codex's `exec_command`, opencode's
`write`); once the tool's result is in the conversation, with the fixed answer.

A conversation that names `EDIT-PROBE /some/file` edits that file with the stub's `edit`
(old text, new text), through the CLI's own edit tool: Claude Code is sent a `Read` of it, then,
once that is answered, an `Edit`; Codex a freeform `apply_patch` (a `custom_tool_call`) that
replaces the old lines with the new. Once the edit's result is in, the fixed answer."""

import itertools
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = "DONE: the brief was read"


class ModelStub:
    """Serves on 127.0.0.1 in a thread; `url` is its base, `requests` what it was sent."""

    def __init__(self, answer=ANSWER, edit=None):
        self.answer = answer
        self.edit = edit
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
                probe = stub.probe(body)
                edit = stub.edit_probe(body)
                if path.endswith("/messages"):
                    if edit:
                        return self.events(stub.anthropic_edit(body.get("model", "stub"), edit, body))
                    return self.events(stub.anthropic(body.get("model", "stub"), probe))
                if path.endswith("/responses"):
                    if edit:
                        return self.events(stub.responses_edit(body.get("model", "stub"), edit, body))
                    return self.events(stub.responses(body.get("model", "stub"), probe))
                if path.endswith("/chat/completions"):
                    return self.events(stub.chat(body.get("model", "stub"), probe))
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

    @staticmethod
    def probe(body):
        """The path to write, when the conversation asks for a write and has no tool result yet."""
        said = json.dumps(body)
        found = re.search(r"WRITE-PROBE (/[^\s\\\"]+)", said)
        answered = any(mark in said for mark in ('"tool_result"', '"function_call_output"',
                                                   '"custom_tool_call_output"', '"role": "tool"'))
        return found.group(1) if found and not answered else None

    @staticmethod
    def edit_probe(body):
        """The file to edit, when the conversation names `EDIT-PROBE /path`."""
        found = re.search(r"EDIT-PROBE (/[^\s\\\"]+)", json.dumps(body))
        return found.group(1) if found else None

    @staticmethod
    def results(body, kind):
        """How many blocks or items of type `kind` the conversation has (`tool_result` in a
        Messages request's contents, `custom_tool_call_output` in a Responses request's input)."""
        count = 0
        for entry in body.get("messages") or body.get("input") or []:
            if not isinstance(entry, dict):
                continue
            if entry.get("type") == kind:
                count += 1
            content = entry.get("content")
            if isinstance(content, list):
                count += sum(1 for c in content if isinstance(c, dict) and c.get("type") == kind)
        return count

    def anthropic_edit(self, model, path, body):
        """Claude Code: `Read` the file, then `Edit` it (it refuses to edit a file it has not
        read), then the fixed answer."""
        done = self.results(body, "tool_result")
        if done >= 2 or not self.edit:
            return self.anthropic(model)
        old, new = self.edit
        tool, args = ("Read", {"file_path": path}) if done == 0 else \
            ("Edit", {"file_path": path, "old_string": old, "new_string": new})
        events = self.anthropic(model, path)
        for _, data in events:
            if data["type"] == "content_block_start":
                data["content_block"]["name"] = tool
            elif data["type"] == "content_block_delta":
                data["delta"]["partial_json"] = json.dumps(args)
        return events

    def responses_edit(self, model, path, body):
        """Codex: one freeform `apply_patch` call replacing the old lines with the new, then the
        fixed answer."""
        if self.results(body, "custom_tool_call_output") >= 1 or not self.edit:
            return self.responses(model)
        old, new = self.edit
        patch = (f"*** Begin Patch\n*** Update File: {path}\n@@\n"
                 + "".join(f"-{line}\n" for line in old.split("\n"))
                 + "".join(f"+{line}\n" for line in new.split("\n"))
                 + "*** End Patch\n")
        n = next(self.ids)
        response = {"id": f"resp_{n}", "object": "response", "created_at": 0, "model": model,
                    "output": [], "status": "in_progress"}
        item = {"id": f"ctc_{n}", "type": "custom_tool_call", "status": "completed", "call_id": f"call_{n}",
                "name": "apply_patch", "input": patch}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 6,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 16}
        events = [
            {"type": "response.created", "response": response},
            {"type": "response.output_item.added", "output_index": 0,
             "item": dict(item, status="in_progress", input="")},
            {"type": "response.custom_tool_call_input.delta", "item_id": item["id"], "output_index": 0,
             "delta": patch},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": dict(response, status="completed", output=[item], usage=usage)},
        ]
        for seq, event in enumerate(events):
            event["sequence_number"] = seq
        return [(e["type"], e) for e in events]

    def anthropic(self, model, probe=None):
        """Messages API events for one text answer, or for a `Write` of the probe's file."""
        usage = {"input_tokens": 10, "output_tokens": 6}
        message = {"id": f"msg_{next(self.ids)}", "type": "message", "role": "assistant", "model": model,
                   "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
        if probe:
            block = {"type": "tool_use", "id": f"toolu_{next(self.ids)}", "name": "Write", "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps({"file_path": probe, "content": "probe\n"})}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": self.answer}
            stop = "end_turn"
        return [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 6}}),
            ("message_stop", {"type": "message_stop"}),
        ]

    def responses(self, model, probe=None):
        """Responses API events for one text answer, or for an `exec_command` writing the probe's
        file."""
        n = next(self.ids)
        response = {"id": f"resp_{n}", "object": "response", "created_at": 0, "model": model,
                    "output": [], "status": "in_progress"}
        if probe:
            arguments = json.dumps({"cmd": f"echo probe > {probe}"})
            item = {"id": f"fc_{n}", "type": "function_call", "status": "completed", "call_id": f"call_{n}",
                    "name": "exec_command", "arguments": arguments}
            streamed = {"type": "response.function_call_arguments.delta", "item_id": item["id"],
                        "output_index": 0, "delta": arguments}
        else:
            part = {"type": "output_text", "text": self.answer, "annotations": []}
            item = {"id": f"msg_{n}", "type": "message", "status": "completed", "role": "assistant",
                    "content": [part]}
            streamed = {"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
                        "content_index": 0, "delta": self.answer}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 6,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 16}
        added = dict(item, status="in_progress", **({"content": []} if not probe else {"arguments": ""}))
        events = [
            {"type": "response.created", "response": response},
            {"type": "response.output_item.added", "output_index": 0, "item": added},
            streamed,
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": dict(response, status="completed", output=[item], usage=usage)},
        ]
        for seq, event in enumerate(events):
            event["sequence_number"] = seq
        return [(e["type"], e) for e in events]

    def chat(self, model, probe=None):
        """Chat Completions stream chunks for one text answer, or for a `write` of the probe's
        file."""
        n = next(self.ids)

        def chunk(delta, finish=None):
            return (None, {"id": f"chat_{n}", "object": "chat.completion.chunk", "created": 0, "model": model,
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

        if probe:
            call = {"index": 0, "id": f"call_{n}", "type": "function",
                    "function": {"name": "write", "arguments": json.dumps({"filePath": probe, "content": "probe\n"})}}
            return [chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
                    chunk({}, "tool_calls"), (None, "[DONE]")]
        return [chunk({"role": "assistant", "content": ""}), chunk({"content": self.answer}),
                chunk({}, "stop"), (None, "[DONE]")]
