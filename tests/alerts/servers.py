"""Real servers on loopback standing in for the mail relay and for Slack."""
from __future__ import annotations

import asyncio
import email
import email.policy
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.smtp import SMTP


def _loopback_socket() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


class SmtpServer:
    """aiosmtpd on its own event loop thread. ``messages`` holds what arrived, parsed; an address in
    ``refuse`` is answered with that SMTP reply at RCPT (e.g. ``"550 no such user"``)."""

    def __init__(self):
        self.messages: list[email.message.EmailMessage] = []
        self.envelopes = []
        self.refuse: dict[str, str] = {}
        self._sock = _loopback_socket()
        self.port = self._sock.getsockname()[1]
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            self._loop.create_server(lambda: SMTP(self, hostname="smtp.test"), sock=self._sock), self._loop).result(10)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append(envelope)
        self.messages.append(email.message_from_bytes(envelope.original_content, policy=email.policy.default))
        return "250 Message accepted for delivery"

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._server.close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


class SlackServer:
    """An incoming-webhook endpoint. Each POST takes the next behaviour from ``script`` (then
    ``"ok"``): ``"ok"`` answers 200 ``ok`` and counts the message as delivered, ``"500"`` / ``"404"``
    answer that status, ``"timeout"`` holds the request for ``hold_s`` and closes without answering.
    ``received`` is every JSON body posted, ``delivered`` those answered 200."""

    def __init__(self, script=(), *, hold_s: float = 3.0):
        self.script = list(script)
        self.hold_s = hold_s
        self.received: list[dict] = []
        self.delivered: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.received.append(body)
                    behaviour = server.script.pop(0) if server.script else "ok"
                if behaviour == "timeout":
                    time.sleep(server.hold_s)
                    self.close_connection = True
                    return
                status, answer = (200, b"ok") if behaviour == "ok" else (int(behaviour), b"no_service" if behaviour == "404" else b"internal_error")
                if status == 200:
                    with server.lock:
                        server.delivered.append(body)
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/services/T000/B000/XXXX"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
