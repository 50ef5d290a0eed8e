#!/usr/bin/env python3
"""bounded_run.py [OPTIONS] -- CMD ARGS...: run CMD, pass its stdout and
stderr through, and fail unless it stayed within the bounds given:

  --exit CODE          exit code CMD must return (a signal never matches)
  --max-seconds S      wall time (CMD is killed past 10*S, and the test fails)
  --max-rss-mb M       CMD's peak resident memory (getrusage of the child)
  --max-rss-growth-mb M  CMD's peak resident memory less that of `CMD[0]
                       --version` (the binary with its shared libraries
                       loaded, doing nothing)
  --max-errors N       at most N lines of CMD's stderr contain ': error: '
  --fifo PATH          make PATH a FIFO and write to it from a thread while
                       CMD runs: --feed TEXT once, or forever with --forever
  --stdin              feed CMD's stdin the same way (a pipe)

The hostile-input tests (error limit, input size cap) use it to measure what
lit's shell cannot: time, memory, and endless writers that stop when the
reader closes.
"""
import argparse
import os
import resource
import subprocess
import sys
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--exit", type=int)
ap.add_argument("--max-seconds", type=float)
ap.add_argument("--max-rss-mb", type=float)
ap.add_argument("--max-rss-growth-mb", type=float)
ap.add_argument("--max-errors", type=int)
ap.add_argument("--fifo")
ap.add_argument("--stdin", action="store_true")
ap.add_argument("--feed", default="")
ap.add_argument("--forever", action="store_true")
ap.add_argument("cmd", nargs=argparse.REMAINDER)
a = ap.parse_args()
cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
feed = a.feed.encode().decode("unicode_escape").encode()


def write_all(f):
    try:
        while True:
            f.write(feed)
            f.flush()
            if not a.forever:
                break
    except (BrokenPipeError, OSError):
        pass  # the reader closed: what a bounded reader does
    finally:
        try:
            f.close()
        except OSError:
            pass


writer = None
if a.fifo:
    if os.path.exists(a.fifo):
        os.unlink(a.fifo)
    os.mkfifo(a.fifo)
    # open() waits for the reader, so it runs in the thread.
    writer = threading.Thread(target=lambda: write_all(open(a.fifo, "wb")), daemon=True)
    writer.start()

stdin = None
if a.stdin:
    r, w = os.pipe()
    stdin = r
    writer = threading.Thread(target=write_all, args=(os.fdopen(w, "wb"),), daemon=True)


def run(cmd, stdin=None, timeout=None, on_start=None):
    """Runs cmd; returns (returncode, stdout, stderr, seconds, peak RSS in MB)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if on_start:
        on_start()
    outs = {}
    readers = [threading.Thread(target=lambda k=k, f=f: outs.__setitem__(k, f.read()))
               for k, f in (("out", proc.stdout), ("err", proc.stderr))]
    for r in readers:
        r.start()
    killer = threading.Timer(timeout, proc.kill) if timeout else None
    if killer:
        killer.start()
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage
    seconds = time.monotonic() - t0
    if killer:
        killer.cancel()
    for r in readers:
        r.join()
    if timeout and seconds > timeout:
        sys.stderr.write(f"bounded_run.py: killed after {timeout} s\n")
        sys.exit(1)
    return os.waitstatus_to_exitcode(status), outs["out"], outs["err"], seconds, usage.ru_maxrss / 1024


base_mb = 0
if a.max_rss_growth_mb is not None:
    base_mb = run([cmd[0], "--version"])[4]

stdin = None
on_start = None
if a.stdin:
    r, w = os.pipe()
    stdin = r
    writer = threading.Thread(target=write_all, args=(os.fdopen(w, "wb"),), daemon=True)
    on_start = lambda: (os.close(r), writer.start())
returncode, out, err, seconds, rss_mb = run(
    cmd, stdin, 10 * a.max_seconds if a.max_seconds else None, on_start)
sys.stdout.buffer.write(out)
sys.stdout.buffer.write(err)
sys.stdout.flush()

failed = []
if a.exit is not None and returncode != a.exit:
    failed.append(f"exit code {returncode}, expected {a.exit}")
if a.max_seconds is not None and seconds > a.max_seconds:
    failed.append(f"took {seconds:.2f} s, more than {a.max_seconds} s")
if a.max_rss_mb is not None and rss_mb > a.max_rss_mb:
    failed.append(f"peak memory {rss_mb:.1f} MB, more than {a.max_rss_mb} MB")
if a.max_rss_growth_mb is not None and rss_mb - base_mb > a.max_rss_growth_mb:
    failed.append(f"peak memory {rss_mb:.1f} MB, {rss_mb - base_mb:.1f} MB over the "
                  f"{base_mb:.1f} MB of `--version`, more than {a.max_rss_growth_mb} MB")
errors = sum(1 for line in err.splitlines() if b": error: " in line)
if a.max_errors is not None and errors > a.max_errors:
    failed.append(f"{errors} error lines, more than {a.max_errors}")
growth = f" ({rss_mb - base_mb:.1f} MB over --version)" if base_mb else ""
print(f"bounded_run.py: exit {returncode}, {seconds:.2f} s, {rss_mb:.1f} MB{growth}, "
      f"{errors} error lines")
for f in failed:
    sys.stderr.write(f"bounded_run.py: {f}\n")
sys.exit(1 if failed else 0)
