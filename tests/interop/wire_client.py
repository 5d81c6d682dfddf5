#!/usr/bin/python3
"""wire_client.py - an independent client of the wire contract (proto/tfgb.proto) (tfgb.v1.Bench), written
with python3-grpcio and nothing from tfgb, to check any server against the
wire contract.

    wire_client.py [--host H] --port P --max-message N check
        every check below; one line per check; exit 0 if all pass, else 1
        --tensors adds EchoTensor and AckTensor (serialized mode)
    wire_client.py [--host H] --port P echo
        one 10-byte Echo; exit 0 if it comes back unchanged

Raw methods (Echo, Ack, Pull) are called with an identity serializer:
request_serializer=None and response_deserializer=None pass bytes through.
"""
import argparse
import os
import struct
import sys

import grpc

SERVICE = "/tfgb.v1.Bench/"
TIMEOUT_S = 30


class Client:
    def __init__(self, target):
        self.channel = grpc.insecure_channel(
            target,
            options=[("grpc.max_receive_message_length", -1),
                     ("grpc.max_send_message_length", -1)])

    def call(self, method, body):
        """Returns (status code, reply bytes or None, details)."""
        stub = self.channel.unary_unary(SERVICE + method, request_serializer=None,
                                        response_deserializer=None)
        try:
            return grpc.StatusCode.OK, stub(body, timeout=TIMEOUT_S), ""
        except grpc.RpcError as e:
            return e.code(), None, e.details()


class Checks:
    def __init__(self):
        self.failed = 0

    def expect(self, what, ok, detail=""):
        if ok:
            print("ok:", what)
        else:
            self.failed += 1
            print("FAIL:", what, detail)

    def status(self, what, got, want):
        code, _, details = got
        self.expect(what, code == want, "(got %s: %r, want %s)" % (code.name, details, want.name))


def u64(n):
    return struct.pack(">Q", n)


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def ld(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def tensor_bundle(contents):
    """TensorBundle, encoded by hand as protobuf does (fields in order)."""
    out = b""
    for i, content in enumerate(contents):
        t = ld(1, ("iov/%d" % i).encode()) + varint(2 << 3) + varint(4)
        t += ld(3, varint(len(content))) + ld(4, content)
        out += ld(1, t)
    return out


def run_tensor_checks(c, k):
    contents = [os.urandom(10), os.urandom(10 << 10)]
    bundle = tensor_bundle(contents)
    code, reply, details = c.call("EchoTensor", bundle)
    k.expect("EchoTensor of 2 tensors comes back as the same bundle",
             code == grpc.StatusCode.OK and reply == bundle,
             "(status %s %r)" % (code.name, details))
    code, reply, details = c.call("AckTensor", bundle)
    want = varint(1 << 3) + varint(sum(map(len, contents))) + varint(2 << 3) + varint(2)
    k.expect("AckTensor answers BundleAck{bytes: %d, tensors: 2}" % sum(map(len, contents)),
             code == grpc.StatusCode.OK and reply == want,
             "(status %s %r, reply %r)" % (code.name, details, reply))
    k.status("EchoTensor of a non-message is INVALID_ARGUMENT", c.call("EchoTensor", b"\xff\xff"),
             grpc.StatusCode.INVALID_ARGUMENT)
    k.status("AckTensor of a non-message is INVALID_ARGUMENT", c.call("AckTensor", b"\x0a\x05ab"),
             grpc.StatusCode.INVALID_ARGUMENT)


def run_checks(c, max_message, tensors=False):
    k = Checks()
    for size in (0, 10, 64 << 10, 1 << 20):
        if size > max_message:
            continue
        body = os.urandom(size)
        code, reply, details = c.call("Echo", body)
        k.expect("Echo %d bytes comes back unchanged" % size,
                 code == grpc.StatusCode.OK and reply == body,
                 "(status %s %r, %s bytes back)" % (code.name, details,
                                                    None if reply is None else len(reply)))
    for size in (0, 10, 100000):
        code, reply, details = c.call("Ack", os.urandom(size))
        k.expect("Ack %d bytes answers 8 bytes big-endian %d" % (size, size),
                 code == grpc.StatusCode.OK and reply == u64(size),
                 "(status %s %r, reply %r)" % (code.name, details, reply))
    for n in (0, 8, 100000):
        code, reply, details = c.call("Pull", u64(n))
        k.expect("Pull %d answers %d bytes" % (n, n),
                 code == grpc.StatusCode.OK and reply is not None and len(reply) == n,
                 "(status %s %r, %s bytes)" % (code.name, details,
                                               None if reply is None else len(reply)))
    k.status("Pull with 7 bytes is INVALID_ARGUMENT", c.call("Pull", b"\0" * 7),
             grpc.StatusCode.INVALID_ARGUMENT)
    k.status("Pull with 9 bytes is INVALID_ARGUMENT", c.call("Pull", b"\0" * 9),
             grpc.StatusCode.INVALID_ARGUMENT)
    k.status("Pull of max_message + 1 is RESOURCE_EXHAUSTED", c.call("Pull", u64(max_message + 1)),
             grpc.StatusCode.RESOURCE_EXHAUSTED)
    k.status("Pull of 2^64 - 1 is RESOURCE_EXHAUSTED", c.call("Pull", u64((1 << 64) - 1)),
             grpc.StatusCode.RESOURCE_EXHAUSTED)
    k.status("Echo of max_message + 1 is RESOURCE_EXHAUSTED",
             c.call("Echo", bytes(max_message + 1)), grpc.StatusCode.RESOURCE_EXHAUSTED)
    k.status("Ack of max_message + 1 is RESOURCE_EXHAUSTED",
             c.call("Ack", bytes(max_message + 1)), grpc.StatusCode.RESOURCE_EXHAUSTED)
    k.status("unknown method Nope is UNIMPLEMENTED", c.call("Nope", b"abc"),
             grpc.StatusCode.UNIMPLEMENTED)
    if tensors:
        run_tensor_checks(c, k)
    code, reply, details = c.call("Echo", b"still serving")
    k.expect("Echo still works after the errors",
             code == grpc.StatusCode.OK and reply == b"still serving",
             "(status %s %r)" % (code.name, details))
    return k.failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--max-message", type=int, default=64 << 20,
                    help="the server's max_message in bytes")
    ap.add_argument("--tensors", action="store_true",
                    help="check EchoTensor and AckTensor too")
    ap.add_argument("action", choices=("check", "echo"))
    a = ap.parse_args()
    host = "[%s]" % a.host if ":" in a.host else a.host
    c = Client("%s:%d" % (host, a.port))
    if a.action == "echo":
        code, reply, details = c.call("Echo", b"0123456789")
        ok = code == grpc.StatusCode.OK and reply == b"0123456789"
        print("ok: Echo" if ok else "FAIL: Echo (%s %r)" % (code.name, details))
        return 0 if ok else 1
    failed = run_checks(c, a.max_message, a.tensors)
    print("%d check%s failed" % (failed, "" if failed == 1 else "s") if failed else "all checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
