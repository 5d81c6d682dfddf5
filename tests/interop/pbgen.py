"""pbgen.py - the Python classes of proto/tfgb.proto, generated at run time.

    import pbgen
    pb = pbgen.load("proto/tfgb.proto")   # the tfgb_pb2 module
    bundle = pb.TensorBundle()

Runs protoc (Debian package protobuf-compiler) with --python_out into a
temporary directory, imports the generated module from there and removes
the directory; nothing generated is kept or committed.  The classes need
python3-protobuf.  Raises Unavailable, saying which package is missing, when
protoc or the protobuf runtime is not there, so that a test can skip.
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile


class Unavailable(Exception):
    pass


def load(proto_path):
    proto_path = os.path.abspath(proto_path)
    protoc = shutil.which("protoc")
    if protoc is None:
        raise Unavailable("no protoc (Debian package protobuf-compiler)")
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        raise Unavailable("%s cannot import google.protobuf (Debian package python3-protobuf)"
                          % sys.executable)
    name = os.path.splitext(os.path.basename(proto_path))[0] + "_pb2"
    tmp = tempfile.mkdtemp(prefix="tfgb-pb.")
    try:
        r = subprocess.run([protoc, "--proto_path=" + os.path.dirname(proto_path),
                            "--python_out=" + tmp, proto_path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            raise RuntimeError("protoc failed on %s: %s" % (proto_path, r.stdout.decode()))
        spec = importlib.util.spec_from_file_location(name, os.path.join(tmp, name + ".py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
