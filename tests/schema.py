"""Checks tfgb JSON results against proto/tfgb-result.schema.json.

As a module (tests/lib.sh's json_check): check_doc(d, where) raises
SystemExit naming the error when d is a tfgb result or sweep document that
the schema rejects.  As a script: every file named, a JSON document or
NDJSON lines (--ndjson), must hold only valid results; exit 1 on the first
that is not.  Without python3-jsonschema nothing is checked (HAVE is
False; tests/t_schema.sh skips then)."""
import json
import os
import sys

try:
    import jsonschema
    HAVE = True
except ImportError:
    HAVE = False

_HERE = os.path.dirname(os.path.abspath(__file__))
_SCHEMA = os.path.join(_HERE, "..", "proto", "tfgb-result.schema.json")
_validator = None


def validator():
    global _validator
    if _validator is None:
        with open(_SCHEMA) as f:
            s = json.load(f)
        jsonschema.Draft202012Validator.check_schema(s)
        _validator = jsonschema.Draft202012Validator(s)
    return _validator


def is_tfgb(d):
    """A tfgb result, sweep or interval line (not some other JSON)."""
    return isinstance(d, dict) and ("benchmark" in d or "sweep" in d or
                                    d.get("type") in ("interval", "result") or
                                    "schema_version" in d)


def check_doc(d, where):
    if not HAVE or not is_tfgb(d):
        return
    e = jsonschema.exceptions.best_match(validator().iter_errors(d))
    if e is not None:
        path = "/".join(str(p) for p in e.absolute_path) or "(top)"
        raise SystemExit("%s: not a valid tfgb result (proto/tfgb-result.schema.json): "
                         "at %s: %s" % (where, path, e.message[:300]))


def docs_of(path):
    """The JSON documents of a file: one, or one per NDJSON line."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")  # invalid UTF-8 fails here
    try:
        return [json.loads(text)]
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def main(paths):
    n = 0
    for p in paths:
        for i, d in enumerate(docs_of(p)):
            if not is_tfgb(d):
                raise SystemExit("%s: document %d is not a tfgb result" % (p, i + 1))
            check_doc(d, "%s: document %d" % (p, i + 1))
            n += 1
    return n


if __name__ == "__main__":
    main(sys.argv[1:])
