#!/usr/bin/env python3
"""Recording sink: a loopback OTLP/HTTP endpoint that stores every export request body exactly as
received, so the lab's recordings are what the libraries' exporters really sent.

Each POST body is written unchanged to OUT/NNNN-<signal>.<ext>: `.json` for
`application/json`, `.pb` for `application/x-protobuf`, plus `.gz` when the request says
`Content-Encoding: gzip` (the body is then kept compressed). `requests.jsonl` records, per request,
the file, path, Content-Type, Content-Encoding, byte count and User-Agent. The answer is 200 with an
empty ExportTraceServiceResponse in the request's own encoding (`{}` for JSON, zero bytes for
protobuf), so every exporter considers the export done.

Stdlib only. Bodies may come with Content-Length or chunked. Listens on 127.0.0.1 only; `--port 0` picks a free port, written to `--port-file`.
"""
import argparse
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 16 * 1024 * 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="directory the request bodies are written to")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", help="file the bound port is written to once listening")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    lock = threading.Lock()
    counter = [0]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):  # quiet: the index file is the log
            pass

        def read_chunked(self):
            body = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return bytes(body)
                if len(body) + size > MAX_BODY:
                    return None
                body += self.rfile.read(size)
                self.rfile.readline()  # CRLF after the chunk

        def do_POST(self):
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                body = self.read_chunked()
            else:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if 0 < length <= MAX_BODY else None
            if not body:
                self.send_error(400, "a body of 1 byte to 16 MiB is required")
                return
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            enc = (self.headers.get("Content-Encoding") or "").strip().lower()
            signal = self.path.rstrip("/").rsplit("/", 1)[-1] or "unknown"
            ext = ".json" if ctype == "application/json" else ".pb"
            if enc == "gzip":
                ext += ".gz"
            with lock:
                counter[0] += 1
                seq = counter[0]
                name = f"{seq:04d}-{signal}{ext}"
                with open(os.path.join(args.out, name), "wb") as f:
                    f.write(body)
                entry = {
                    "seq": seq,
                    "file": name,
                    "path": self.path,
                    "content_type": self.headers.get("Content-Type") or "",
                    "content_encoding": self.headers.get("Content-Encoding") or "",
                    "bytes": len(body),
                    "user_agent": self.headers.get("User-Agent") or "",
                }
                with open(os.path.join(args.out, "requests.jsonl"), "a") as f:
                    f.write(json.dumps(entry, sort_keys=True) + "\n")
            if ctype == "application/json":
                out, out_type = b"{}", "application/json"
            else:
                out, out_type = b"", "application/x-protobuf"
            self.send_response(200)
            self.send_header("Content-Type", out_type)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(srv.server_address[1]))
        os.replace(tmp, args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
