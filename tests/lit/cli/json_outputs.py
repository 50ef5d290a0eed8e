#!/usr/bin/env python3
"""json_outputs.py SCHEDC DIR: every --json output of schedc parses as JSON
(strict: json.loads of stdout decoded as UTF-8) and carries non-ASCII file
names correctly: a UTF-8 name comes back as it was, a name whose bytes are
not UTF-8 (Latin-1 'é') comes back with U+FFFD in their place. Prints one
line per command checked; exits 1 on the first failure."""
import json
import os
import shutil
import subprocess
import sys

schedc, d = sys.argv[1], sys.argv[2]
shutil.rmtree(d, ignore_errors=True)
os.makedirs(d)
good = b"tile 64x64x8; thread 4x4\n"
utf8 = os.path.join(d, "r\u00e9sum\u00e9 \u65e5\u672c \"q\" \\.sched")
latin1 = os.path.join(os.fsencode(d), b"caf\xe9.sched")
bad = os.path.join(d, "b\u00e4d.sched")
open(utf8, "wb").write(good)
open(latin1, "wb").write(good)
open(bad, "wb").write(b"tile 0x8x8\n")
latin1_seen = os.fsdecode(os.path.join(os.fsencode(d), b"caf")) + "\ufffd.sched"

failures = 0


def check(args, want_rc, names):
    """Runs schedc ARGS; stdout must parse; `names` are the "file" values
    expected, in order (for a list) or alone (for an object)."""
    global failures
    p = subprocess.run([schedc] + args, capture_output=True)
    label = " ".join(os.fsdecode(a) if isinstance(a, bytes) else a for a in args[:2])
    try:
        doc = json.loads(p.stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        print(f"FAIL {label}: stdout is not JSON in UTF-8 ({e}): {p.stdout[:300]!r}")
        failures += 1
        return None
    items = doc if isinstance(doc, list) else [doc]
    got = [i.get("file") for i in items]
    if p.returncode not in want_rc or got != names:
        print(f"FAIL {label}: exit {p.returncode} (want {want_rc}), files {got!r} (want {names!r})"
              f"\n{p.stderr.decode(errors='replace')[-500:]}")
        failures += 1
        return None
    print(f"ok {label}: exit {p.returncode}, {len(items)} JSON value(s), files {got!r}")
    return doc


doc = check(["check", "--json", utf8, latin1, bad], [2], [utf8, latin1_seen, bad])
if doc:
    assert doc[0]["ok"] and doc[1]["ok"] and not doc[2]["ok"], doc
    assert doc[0]["schedule"]["tile"] == [64, 64, 8], doc[0]
    # A bad file's diagnostics, as printed, name the file in UTF-8.
    assert bad + ":1:6: error: tile BM must be at least 1, got 0" in doc[2]["diagnostics"], doc[2]
check(["explain", "--json", utf8], [0], [utf8])
check(["explain", "--json", latin1], [0], [latin1_seen])
check(["ablate", "--json", utf8], [0, 3], [utf8])
# run: a result on a GPU (0, or 1 for a wrong one), else the no-device object (3).
check(["run", "--json", "--shape", "64x64x64", utf8], [0, 1, 3], [utf8])
check(["run", "--json", "--shape", "64x64x64", latin1], [0, 1, 3], [latin1_seen])
sys.exit(1 if failures else 0)
