#!/usr/bin/python3
"""tensor_client.py - EchoTensor and AckTensor (and their in-place forms) of the wire
contract (proto/tfgb.proto) called with real protobuf messages: python3-grpcio
and the classes protoc generates from proto/tfgb.proto at run time (pbgen.py),
nothing from tfgb.

    tensor_client.py [--host H] --port P [--max-message N] [--proto FILE] check
        one line per check; exit 0 if all pass, 1 if one fails, 77 when
        protoc or python3-protobuf is missing (the reason on the last line)

The checks: bundles of every dtype, empty and partly empty tensors and a
1 MiB content come back equal from EchoTensor (as messages and as bytes);
AckTensor answers BundleAck {bytes: sum of the content lengths, tensors};
bodies that do not parse get INVALID_ARGUMENT and a body over max_message
RESOURCE_EXHAUSTED, and the server answers again after each.  Every check
runs twice: on EchoTensor and AckTensor, then on their in-place forms
EchoTensorZeroCopy and AckTensorZeroCopy (mode tensorflow), which must
answer alike.  PullTensor and PullTensorZeroCopy: a TensorPull of every
dtype, a scalar and a zero dimension answers one tensor of that name, dtype
and shape with the content's size, the same bytes from both and as protobuf
encodes the bundle; a bad dtype, a negative dimension, 9 dimensions or a
body that does not parse is INVALID_ARGUMENT, more content than max_message
RESOURCE_EXHAUSTED, and the server answers again after each.
"""
import argparse
import os
import sys

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbgen  # noqa: E402

SERVICE = "/tfgb.v1.Bench/"
TIMEOUT_S = 30
DTYPES = {"uint8": (4, 1), "float32": (1, 4), "float16": (19, 2), "int64": (9, 8)}


class Checks:
    def __init__(self, zc=""):
        self.failed = 0
        self.zc = zc

    def expect(self, what, ok, detail=""):
        """what names EchoTensor and AckTensor: the methods with zc after them"""
        if self.zc:
            what = what.replace("EchoTensor", "EchoTensor" + self.zc).replace(
                "AckTensor", "AckTensor" + self.zc)
        if ok:
            print("ok:", what)
        else:
            self.failed += 1
            print("FAIL:", what, detail)


def call(stub, body):
    """(status code, reply or None, details)"""
    try:
        return grpc.StatusCode.OK, stub(body, timeout=TIMEOUT_S), ""
    except grpc.RpcError as e:
        return e.code(), None, e.details()


def bundle(pb, sizes, dtype="uint8"):
    number, width = DTYPES[dtype]
    b = pb.TensorBundle()
    for i, n in enumerate(sizes):
        t = b.tensors.add()
        t.name = "iov/%d" % i
        t.dtype = number
        t.shape.append(n // width)
        t.content = os.urandom(n)
    return b


def run(pb, channel, max_message, zc=""):
    """zc = "ZeroCopy": the same checks of the in-place methods (mode tensorflow)."""
    k = Checks(zc)
    echo = channel.unary_unary(SERVICE + "EchoTensor" + zc,
                               request_serializer=pb.TensorBundle.SerializeToString,
                               response_deserializer=pb.TensorBundle.FromString)
    echo_raw = channel.unary_unary(SERVICE + "EchoTensor" + zc, request_serializer=None,
                                   response_deserializer=None)
    ack = channel.unary_unary(SERVICE + "AckTensor" + zc,
                              request_serializer=pb.TensorBundle.SerializeToString,
                              response_deserializer=pb.BundleAck.FromString)
    ack_raw = channel.unary_unary(SERVICE + "AckTensor" + zc, request_serializer=None,
                                  response_deserializer=pb.BundleAck.FromString)

    for dtype in DTYPES:
        b = bundle(pb, [8, 16, 10240, 8], dtype)
        code, reply, details = call(echo, b)
        k.expect("EchoTensor of 4 %s tensors comes back equal" % dtype,
                 code == grpc.StatusCode.OK and reply == b, "(%s %r)" % (code.name, details))
        code, raw, details = call(echo_raw, b.SerializeToString())
        k.expect("EchoTensor of 4 %s tensors: the same bytes as protobuf's encoding" % dtype,
                 code == grpc.StatusCode.OK and raw == b.SerializeToString(),
                 "(%s %r)" % (code.name, details))
        code, reply, details = call(ack, b)
        want = pb.BundleAck(bytes=sum(len(t.content) for t in b.tensors), tensors=4)
        k.expect("AckTensor of 4 %s tensors answers {bytes: %d, tensors: 4}" % (dtype, want.bytes),
                 code == grpc.StatusCode.OK and reply == want,
                 "(%s %r, got %r)" % (code.name, details, reply))

    code, reply, details = call(echo, pb.TensorBundle())
    k.expect("EchoTensor of an empty bundle comes back empty",
             code == grpc.StatusCode.OK and reply == pb.TensorBundle(), "(%s)" % code.name)
    code, reply, details = call(ack, pb.TensorBundle())
    k.expect("AckTensor of an empty bundle answers {bytes: 0, tensors: 0}",
             code == grpc.StatusCode.OK and reply.bytes == 0 and reply.tensors == 0,
             "(%s)" % code.name)

    partial = pb.TensorBundle()
    partial.tensors.add()                   # every field at its default
    partial.tensors.add(content=b"\0" * 5)  # no name, no dtype, no shape
    partial.tensors.add(name="x", shape=[1, 2, 3])
    code, reply, details = call(echo, partial)
    k.expect("EchoTensor of tensors with fields left out comes back equal",
             code == grpc.StatusCode.OK and reply == partial, "(%s %r)" % (code.name, details))
    code, reply, details = call(ack, partial)
    k.expect("AckTensor counts them: {bytes: 5, tensors: 3}",
             code == grpc.StatusCode.OK and reply.bytes == 5 and reply.tensors == 3,
             "(%s %r)" % (code.name, reply))

    if max_message > (1 << 20) + 4096:
        big = bundle(pb, [1 << 20, 10])
        code, reply, details = call(echo, big)
        k.expect("EchoTensor of a 1 MiB tensor comes back equal",
                 code == grpc.StatusCode.OK and reply == big, "(%s %r)" % (code.name, details))

    # shape not packed, as proto2 encoders write it: field 3, varint, twice
    unpacked = b"\x0a\x0c" + b"\x0a\x01x" + b"\x18\x02" + b"\x18\x03" + b"\x22\x03abc"
    code, reply, details = call(ack_raw, unpacked)
    k.expect("AckTensor of a tensor with an unpacked shape answers {bytes: 3, tensors: 1}",
             code == grpc.StatusCode.OK and reply.bytes == 3 and reply.tensors == 1,
             "(%s %r)" % (code.name, details))

    # bodies no protobuf parser takes (a known field with another wire type,
    # or a group, is an unknown field to some parsers and an error to others)
    good = bundle(pb, [10, 1000]).SerializeToString()
    for what, body in (("a cut varint", b"\xff\xff"),
                       ("a length past the end", b"\x0a\x05ab"),
                       ("a bundle cut in the middle", good[:len(good) // 2]),
                       ("a tensor with a cut field", b"\x0a\x02\x22\x05")):
        for method, stub in (("EchoTensor", echo_raw), ("AckTensor", ack_raw)):
            code, _, details = call(stub, body)
            k.expect("%s of %s is INVALID_ARGUMENT" % (method, what),
                     code == grpc.StatusCode.INVALID_ARGUMENT,
                     "(got %s %r)" % (code.name, details))
        code, reply, _ = call(echo, pb.TensorBundle(tensors=[pb.Tensor(name="after")]))
        k.expect("EchoTensor answers after %s" % what,
                 code == grpc.StatusCode.OK and reply.tensors[0].name == "after",
                 "(%s)" % code.name)

    over = pb.TensorBundle(tensors=[pb.Tensor(content=bytes(max_message))])
    code, _, details = call(echo, over)
    k.expect("EchoTensor over max_message is RESOURCE_EXHAUSTED",
             code == grpc.StatusCode.RESOURCE_EXHAUSTED, "(got %s %r)" % (code.name, details))
    code, reply, _ = call(ack, bundle(pb, [7]))
    k.expect("AckTensor still works after the errors",
             code == grpc.StatusCode.OK and reply.bytes == 7 and reply.tensors == 1,
             "(%s)" % code.name)
    return k.failed


def run_pull(pb, channel, max_message):
    """PullTensor and PullTensorZeroCopy, checked against each other."""
    k = Checks()
    stubs = [(m, channel.unary_unary(SERVICE + m, request_serializer=pb.TensorPull.SerializeToString,
                                     response_deserializer=None))
             for m in ("PullTensor", "PullTensorZeroCopy")]
    cases = [("conv/kernel", d, [3, 5]) for d in DTYPES] + [("step", "int64", []),
                                                          ("none", "float32", [4, 0])]
    for name, dtype, shape in cases:
        number, width = DTYPES[dtype]
        n = width
        for d in shape:
            n *= d
        got = []
        for method, stub in stubs:
            code, raw, details = call(stub, pb.TensorPull(name=name, dtype=number, shape=shape))
            b = pb.TensorBundle.FromString(raw) if code == grpc.StatusCode.OK else None
            k.expect("%s of %s %s %s answers its tensor of %d bytes" % (method, name, dtype, shape, n),
                     b is not None and len(b.tensors) == 1 and b.tensors[0].name == name
                     and b.tensors[0].dtype == number and list(b.tensors[0].shape) == shape
                     and len(b.tensors[0].content) == n and b.SerializeToString() == raw,
                     "(%s %r)" % (code.name, details))
            got.append(raw)
        k.expect("PullTensor and PullTensorZeroCopy of %s %s: the same bytes" % (name, dtype),
                 got[0] is not None and got[0] == got[1])
    for what, req in (("dtype 2", pb.TensorPull(name="x", dtype=2, shape=[4]).SerializeToString()),
                      ("a negative dimension",
                       pb.TensorPull(name="x", dtype=1, shape=[4, -1]).SerializeToString()),
                      ("9 dimensions", pb.TensorPull(name="x", dtype=1, shape=[1] * 9).SerializeToString()),
                      ("a cut varint", b"\x10\xff"),
                      ("a length past the end", b"\x0a\x05ab")):
        for method, _ in stubs:
            raw_stub = channel.unary_unary(SERVICE + method, request_serializer=None,
                                           response_deserializer=None)
            code, _, details = call(raw_stub, req)
            k.expect("%s of %s is INVALID_ARGUMENT" % (method, what),
                     code == grpc.StatusCode.INVALID_ARGUMENT, "(got %s %r)" % (code.name, details))
    for method, stub in stubs:
        code, _, details = call(stub, pb.TensorPull(name="x", dtype=4, shape=[max_message + 1]))
        k.expect("%s of more than max_message is RESOURCE_EXHAUSTED" % method,
                 code == grpc.StatusCode.RESOURCE_EXHAUSTED, "(got %s %r)" % (code.name, details))
        code, raw, _ = call(stub, pb.TensorPull(name="after", dtype=4, shape=[7]))
        k.expect("%s answers after the errors" % method,
                 code == grpc.StatusCode.OK and len(pb.TensorBundle.FromString(raw).tensors[0].content) == 7,
                 "(%s)" % code.name)
    return k.failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--max-message", type=int, default=64 << 20,
                    help="the server's max_message in bytes")
    ap.add_argument("--proto", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                    "..", "..", "proto", "tfgb.proto"))
    ap.add_argument("action", choices=("check",))
    a = ap.parse_args()
    try:
        pb = pbgen.load(a.proto)
    except pbgen.Unavailable as e:
        print("skip: %s" % e)
        return 77
    host = "[%s]" % a.host if ":" in a.host else a.host
    channel = grpc.insecure_channel("%s:%d" % (host, a.port),
                                    options=[("grpc.max_receive_message_length", -1),
                                             ("grpc.max_send_message_length", -1)])
    failed = run(pb, channel, a.max_message) + run(pb, channel, a.max_message, "ZeroCopy")
    failed += run_pull(pb, channel, a.max_message)
    print("%d check%s failed" % (failed, "" if failed == 1 else "s") if failed
          else "all checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
