#!/usr/bin/python3
"""Drive a nicsim debugging session from Python.

Start a session with `nicsim debug SCENARIO --listen 127.0.0.1:PORT`; it
prints its port and token. Then:

    examples/debug_client/debug_client.py 127.0.0.1:PORT TOKEN \
        "break fsm machine=hca.qp to=Rts" continue "show h0.qp64"

Each command's answer is printed; events pushed by the server (stops caused
by another client) are printed as they come. Needs protoc and Python's
protobuf (Debian: protobuf-compiler python3-protobuf). The messages are
those of sim/proto/debug.proto, compiled here at start.
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "..", "..", "sim", "proto")


def load_messages():
    out = tempfile.mkdtemp(prefix="nicsim_debug_pb_")
    subprocess.run(["protoc", "-I", PROTO_DIR, "--python_out", out, "debug.proto"], check=True)
    sys.path.insert(0, out)
    import debug_pb2  # noqa: E402 (generated just now)
    return debug_pb2


def read_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the server closed the connection")
        data += chunk
    return data


class Client:
    def __init__(self, address, token, pb):
        host, port = address.rsplit(":", 1)
        self.pb = pb
        self.sock = socket.create_connection((host, int(port)))
        self.seq = 0
        hello = self.request()
        hello.hello.token = token
        hello.hello.control = True
        answer = self.ask(hello)
        if not answer.ok:
            raise RuntimeError(answer.text.strip())
        print(answer.text, end="")

    def request(self):
        self.seq += 1
        r = self.pb.Request()
        r.seq = self.seq
        return r

    def ask(self, request):
        body = request.SerializeToString()
        self.sock.sendall(struct.pack(">I", len(body)) + body)
        while True:
            (n,) = struct.unpack(">I", read_exact(self.sock, 4))
            message = self.pb.ServerMessage()
            message.ParseFromString(read_exact(self.sock, n))
            if message.HasField("event"):
                print("[event]", message.event.text, end="")
                continue
            return message.response

    def command(self, line):
        r = self.request()
        r.command.line = line
        return self.ask(r)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    client = Client(argv[1], argv[2], load_messages())
    failed = False
    for line in argv[3:]:
        answer = client.command(line)
        print("(nicsim)", line)
        print(("" if answer.ok else "error: ") + answer.text, end="")
        if answer.stop.position:
            print("  [stop: %s at %d ps]" % (answer.stop.position, answer.stop.time_ps))
        failed = failed or not answer.ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
