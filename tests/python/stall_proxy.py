"""A TCP proxy in front of the S3 server that can stall an upload at a chosen moment.

Why: "kill -9 during upload" needs the collector to be inside a PUT when it dies, reliably, in a
release build without failpoints. Between the collector and Garage this proxy either passes
bytes through, holds every request byte sent after the switch (the PUT never reaches the
server: killed before the upload), or forwards requests but holds the answers (the object is
stored, the collector never hears so: killed between the upload and the WAL release).
"""

from __future__ import annotations

import socket
import threading

PASS = "pass"
HOLD_REQUESTS = "hold_requests"
HOLD_RESPONSES = "hold_responses"


class StallProxy:
    def __init__(self, upstream_port: int):
        self.upstream = ("127.0.0.1", upstream_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.mode = PASS
        # A request starting with PUT was held (HOLD_REQUESTS) ...
        self.put_held = threading.Event()
        # ... or forwarded and its answer held (HOLD_RESPONSES).
        self.put_answer_held = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, server]
            state = {"last_method": b""}
            threading.Thread(target=self._pump, args=(client, server, True, state), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False, state), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, to_server: bool, state: dict) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if to_server:
                    method = data.split(b" ", 1)[0]
                    if method in (b"PUT", b"GET", b"HEAD", b"POST", b"DELETE"):
                        state["last_method"] = method
                    if self.mode == HOLD_REQUESTS:
                        if state["last_method"] == b"PUT":
                            self.put_held.set()
                        continue  # never forwarded
                elif self.mode == HOLD_RESPONSES:
                    if state["last_method"] == b"PUT":
                        self.put_answer_held.set()
                    continue  # never answered
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self._closed = True
        self.listener.close()
        with self._lock:
            for s in self._sockets:
                s.close()
