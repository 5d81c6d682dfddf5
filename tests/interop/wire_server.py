#!/usr/bin/python3
"""wire_server.py - an independent server of the wire contract (proto/tfgb.proto) (tfgb.v1.Bench), written
with python3-grpcio and nothing from tfgb, so that tfgb's workers can be
checked against another gRPC stack.

    wire_server.py [--host H] [--max-message N] [--proto FILE] PORT

Prints "ready" on stdout once it listens; stops on SIGTERM or SIGINT with
exit status 0.  Exit status 1 when the port cannot be bound.

Raw methods (Echo, Ack, Pull) use a generic handler without (de)serializers:
the handlers see the message body as bytes.  EchoTensor and AckTensor parse
TensorBundle with the small protobuf decoder below (no generated code), or,
with --proto FILE (proto/tfgb.proto), with the classes protoc generates from
FILE at start-up (pbgen.py: protobuf-compiler and python3-protobuf), which
re-serialize the bundle with python3-protobuf's own encoder.
Requests larger than --max-message are refused by gRPC core itself
(grpc.max_receive_message_length) with RESOURCE_EXHAUSTED.
"""
import argparse
import os
import signal
import struct
import sys
import threading
from concurrent import futures

import grpc


class ParseError(Exception):
    pass


def read_varint(buf, i):
    shift = value = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ParseError("truncated or overlong varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def fields(buf):
    """Yields (field number, wire type, value) of one protobuf message."""
    i = 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise ParseError("field number 0")
        if wt == 0:
            v, i = read_varint(buf, i)
        elif wt == 1:
            if i + 8 > len(buf):
                raise ParseError("truncated fixed64")
            v, i = buf[i:i + 8], i + 8
        elif wt == 2:
            n, i = read_varint(buf, i)
            if i + n > len(buf):
                raise ParseError("truncated length-delimited field")
            v, i = buf[i:i + n], i + n
        elif wt == 5:
            if i + 4 > len(buf):
                raise ParseError("truncated fixed32")
            v, i = buf[i:i + 4], i + 4
        else:
            raise ParseError("wire type %d" % wt)
        yield num, wt, v


def signed64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def parse_tensor(buf):
    t = {"name": "", "dtype": 0, "shape": [], "content": b""}
    for num, wt, v in fields(buf):
        if num == 1 and wt == 2:
            t["name"] = bytes(v).decode("utf-8")
        elif num == 2 and wt == 0:
            t["dtype"] = signed64(v)
        elif num == 3 and wt == 0:
            t["shape"].append(signed64(v))
        elif num == 3 and wt == 2:  # packed
            j = 0
            while j < len(v):
                x, j = read_varint(v, j)
                t["shape"].append(signed64(x))
        elif num == 4 and wt == 2:
            t["content"] = bytes(v)
        elif num in (1, 2, 3, 4):
            raise ParseError("field %d has wire type %d" % (num, wt))
    return t


def parse_bundle(buf):
    out = []
    for num, wt, v in fields(memoryview(buf)):
        if num == 1 and wt == 2:
            out.append(parse_tensor(v))
        elif num == 1:
            raise ParseError("field 1 has wire type %d" % wt)
    return out


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def ld(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def serialize_bundle(tensors):
    out = []
    for t in tensors:
        m = b""
        if t["name"]:
            m += ld(1, t["name"].encode("utf-8"))
        if t["dtype"]:
            m += varint(2 << 3) + varint(t["dtype"])
        if t["shape"]:
            m += ld(3, b"".join(varint(x) for x in t["shape"]))
        if t["content"]:
            m += ld(4, t["content"])
        out.append(ld(1, m))
    return b"".join(out)


class Bench:
    def __init__(self, max_message, pb=None):
        self.max_message = max_message
        self.pb = pb  # generated classes, or None for the decoder above

    def echo(self, request, context):
        return request

    def ack(self, request, context):
        return struct.pack(">Q", len(request))

    def pull(self, request, context):
        if len(request) != 8:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          "Pull takes exactly 8 bytes: the reply length, big-endian")
        n = struct.unpack(">Q", request)[0]
        if n > self.max_message:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                          "Pull asks for more than the server's max_message")
        return bytes(n)

    def parse_pb(self, request, context):
        from google.protobuf.message import DecodeError
        try:
            return self.pb.TensorBundle.FromString(request)
        except DecodeError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "not a TensorBundle: %s" % e)

    def echo_tensor(self, request, context):
        if self.pb:
            return self.parse_pb(request, context).SerializeToString()
        try:
            return serialize_bundle(parse_bundle(request))
        except (ParseError, UnicodeDecodeError) as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "not a TensorBundle: %s" % e)

    def ack_tensor(self, request, context):
        if self.pb:
            b = self.parse_pb(request, context)
            return self.pb.BundleAck(bytes=sum(len(t.content) for t in b.tensors),
                                     tensors=len(b.tensors)).SerializeToString()
        try:
            tensors = parse_bundle(request)
        except (ParseError, UnicodeDecodeError) as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "not a TensorBundle: %s" % e)
        nbytes = sum(len(t["content"]) for t in tensors)
        out = b""
        if nbytes:
            out += varint(1 << 3) + varint(nbytes)
        if tensors:
            out += varint(2 << 3) + varint(len(tensors))
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--max-message", type=int, default=64 << 20)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--proto", help="parse the Tensor methods with classes generated from this")
    ap.add_argument("port", type=int)
    a = ap.parse_args()

    pb = None
    if a.proto:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import pbgen
        try:
            pb = pbgen.load(a.proto)
        except pbgen.Unavailable as e:
            print("wire_server: --proto: %s" % e, file=sys.stderr)
            return 77
    b = Bench(a.max_message, pb)
    raw = grpc.unary_unary_rpc_method_handler
    handler = grpc.method_handlers_generic_handler("tfgb.v1.Bench", {
        "Echo": raw(b.echo),
        "Ack": raw(b.ack),
        "Pull": raw(b.pull),
        "EchoTensor": raw(b.echo_tensor),
        "AckTensor": raw(b.ack_tensor),
        # the in-place forms answer the same messages (proto/tfgb.proto)
        "EchoTensorZeroCopy": raw(b.echo_tensor),
        "AckTensorZeroCopy": raw(b.ack_tensor),
    })
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=a.threads),
        handlers=[handler],
        options=[("grpc.max_receive_message_length", a.max_message),
                 ("grpc.max_send_message_length", -1),
                 ("grpc.so_reuseport", 0)])
    host = "[%s]" % a.host if ":" in a.host else a.host
    target = "%s:%d" % (host, a.port)
    try:
        bound = server.add_insecure_port(target)
    except RuntimeError:
        bound = 0
    if not bound:
        print("wire_server: cannot listen on '%s': address in use or not local" % target,
              file=sys.stderr)
        return 1

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    server.start()
    print("ready", flush=True)
    while not stop.wait(0.2):
        pass
    server.stop(grace=1).wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
