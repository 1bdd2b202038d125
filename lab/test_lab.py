"""Self-tests of the lab: the sink stores bodies byte for byte over a real loopback socket, and the
committed labels are consistent with the committed recordings (every span a label names exists,
every label has evidence, every recording is labelled).

    ~/.cache/tripline-lab/py/tools/bin/python -m unittest lab/test_lab.py   # after lab/record
    python3 -m unittest lab/test_lab.py                                    # .pb checks skipped
"""
import gzip
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

LAB = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, LAB)


class SinkTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "out")
        port_file = os.path.join(self.tmp.name, "port")
        self.proc = subprocess.Popen([sys.executable, os.path.join(LAB, "sink.py"), "--out", self.out, "--port-file", port_file])
        deadline = time.time() + 10
        while not (os.path.exists(port_file) and open(port_file).read()):
            self.assertLess(time.time(), deadline, "sink did not start")
            time.sleep(0.02)
        self.port = int(open(port_file).read())

    def tearDown(self):
        self.proc.terminate()
        self.proc.wait(5)
        self.tmp.cleanup()

    def post(self, body, headers, chunked=False):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        if chunked:
            c.putrequest("POST", "/v1/traces")
            for k, v in headers.items():
                c.putheader(k, v)
            c.putheader("Transfer-Encoding", "chunked")
            c.endheaders()
            for i in range(0, len(body), 7):
                part = body[i:i + 7]
                c.send(b"%x\r\n%s\r\n" % (len(part), part))
            c.send(b"0\r\n\r\n")
        else:
            c.request("POST", "/v1/traces", body=body, headers=headers)
        r = c.getresponse()
        return r.status, r.getheader("Content-Type"), r.read()

    def test_bodies_are_kept_byte_for_byte(self):
        js = b'{"resourceSpans":[]}'
        pb = bytes(range(256))
        gz = gzip.compress(b"\x0a\x00")
        self.assertEqual(self.post(js, {"Content-Type": "application/json"}), (200, "application/json", b"{}"))
        self.assertEqual(self.post(pb, {"Content-Type": "application/x-protobuf"}, chunked=True), (200, "application/x-protobuf", b""))
        self.assertEqual(self.post(gz, {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"})[0], 200)
        files = sorted(f for f in os.listdir(self.out) if f != "requests.jsonl")
        self.assertEqual(files, ["0001-traces.json", "0002-traces.pb", "0003-traces.pb.gz"])
        for name, body in zip(files, [js, pb, gz]):
            self.assertEqual(open(os.path.join(self.out, name), "rb").read(), body)
        index = [json.loads(line) for line in open(os.path.join(self.out, "requests.jsonl"))]
        self.assertEqual([(e["file"], e["content_encoding"], e["bytes"]) for e in index],
                         [("0001-traces.json", "", len(js)), ("0002-traces.pb", "", 256), ("0003-traces.pb.gz", "gzip", len(gz))])

    def test_empty_body_is_refused(self):
        self.assertEqual(self.post(b"", {"Content-Type": "application/json"})[0], 400)
        self.assertFalse(os.path.exists(os.path.join(self.out, "requests.jsonl")))


class PrivacyTest(unittest.TestCase):
    def test_no_recording_names_this_machine(self):
        import socket

        needles = {socket.gethostname().encode()}
        try:
            needles.add(open("/etc/machine-id").read().strip().encode())
        except OSError:
            pass
        needles.discard(b"")
        root = os.path.join(LAB, "recordings")
        seen = 0
        for dirpath, _, files in os.walk(root):
            for f in files:
                data = open(os.path.join(dirpath, f), "rb").read()
                if f.endswith(".gz"):
                    data = gzip.decompress(data)
                seen += 1
                for n in needles:
                    # the host name as a whole word (a short name like "vm" is part of other words)
                    hit = any(not data[i - 1:i].isalnum() and not data[i + len(n):i + len(n) + 1].isalnum()
                              for i in _find_all(data, n))
                    self.assertFalse(hit, f"{os.path.join(dirpath, f)} contains {n!r}")
        self.assertGreater(seen, 0)


def _find_all(data, needle):
    i = data.find(needle)
    while i != -1:
        yield i
        i = data.find(needle, i + 1)


class LabelsTest(unittest.TestCase):
    def test_every_recording_is_labelled_and_every_label_points_at_real_spans(self):
        try:
            import google.protobuf  # noqa: F401
            have_pb = True
        except ImportError:
            have_pb = False
        import spans as spanlib

        labels = json.load(open(os.path.join(LAB, "labels.json")))["recordings"]
        root = os.path.join(LAB, "recordings")
        dirs = {f"{lib}/{rec}" for lib in os.listdir(root) for rec in os.listdir(os.path.join(root, lib))}
        self.assertEqual(dirs, set(labels), "labels.json and lab/recordings disagree: run lab/record or derive_labels.py")
        checked = 0
        for name, rec in labels.items():
            d = os.path.join(root, name)
            if not have_pb and any(f.endswith(".pb") for f in os.listdir(d)):
                continue
            ids = {s["span_id"] for s in spanlib.load(d)}
            self.assertEqual(len(ids), rec["spans"], name)
            for f in rec["expected_findings"]:
                self.assertTrue(f["evidence"], f"{name}: label {f['id']} without evidence")
                named = set(f.get("call_span_ids", [])) | set(f.get("execute_tool_span_ids", [])) | set(f.get("span_ids", []))
                named |= {s["span_id"] for s in f.get("server_spans", [])}
                if "execute_tool_span_id" in f:
                    named.add(f["execute_tool_span_id"])
                self.assertTrue(named, f"{name}: label {f['id']} names no span")
                self.assertLessEqual(named, ids, f"{name}: label {f['id']} names spans not in the recording")
            self.assertEqual(rec["negative_control"], not rec["expected_findings"], name)
            checked += 1
        self.assertGreater(checked, 0)


if __name__ == "__main__":
    unittest.main()
