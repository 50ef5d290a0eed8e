#!/usr/bin/env python3
"""Runs the CUDA that schedc emits for an mma.sync / WMMA schedule on the CPU.

A developer check for machines without a GPU (it is not part of the test
suite): `schedc emit` the schedule, strip the inline-PTX helpers (cp.async,
ldmatrix, mma.sync, mbarriers, TMA) and replace them with the C++ models of
shim.h, compile with g++, and run the main entry (with tensor maps when it
takes them) and the fallback entry over the whole grid on ragged shapes, with
the layouts the file sets, comparing C with a reference GEMM exactly
(small-integer inputs). Not for wgmma kernels, nor for epilogues with a bias
(the driver passes none).

    scripts/emulate_mma/emulate.py [--arch sm_90] [--shapes 200x136x72,...] FILE.sched...

Prints one line per (file, shape, entry); exit 1 on a mismatch.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Helpers whose bodies are inline PTX: shim.h defines them.
DROP = re.compile(r'__device__ __forceinline__ \S+ (mbar_init|mbar_init_fence|mbar_expect_tx|'
                  r'mbar_arrive|mbar_wait|tma_load_2d|smem_u32|cp_async_16|cp_async_4|'
                  r'cp_async_commit|cp_async_wait|ldmatrix_x\d(_trans)?|mma_16x8x\d+|lds_a|lds_b)\(')


def strip(src):
    out, lines, i = [], src.split('\n'), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith('#include'):
            i += 1
            continue
        if DROP.match(line):
            if out and out[-1].startswith('template <int N>'):
                out.pop()
            if not (line.rstrip().endswith('}') and line.count('{') == line.count('}')):
                while not lines[i].startswith('}'):
                    i += 1
            i += 1
            continue
        if 'extern __shared__' in line:  # shim.h's global `smem`
            i += 1
            continue
        if line.startswith('struct __align__(64) TmaMap'):
            while not lines[i].startswith('};'):
                i += 1
            i += 1
            continue
        out.append(line)
        i += 1
    return '\n'.join(out)


def build(code, entry, work):
    T = re.search(r'typedef (\S+) T;', code).group(1)
    flags = ['-DEMU_TYPE=%d' % {'__half': 0, '__nv_bfloat16': 1, 'float': 2}[T],
             '-DENTRY=' + entry]
    if 'blockIdx.x / (GROUP' in code:
        flags.append('-DEMU_GRID1D')
    if re.search(entry + r'\(int M.*TmaMap tma_a', code):
        for op in 'AB':
            m = re.search(op + r' as (one|\d+) \((\d+), (\d+)\) box', code)
            flags += ['-D%s_BOX_R=%s' % (op, m.group(2)), '-D%s_BOX_C=%s' % (op, m.group(3))]
        flags.append('-DEMU_TMA')
    inc = os.path.join(work, 'kernel.inc')
    with open(inc, 'w') as f:
        f.write(code)
    exe = os.path.join(work, entry)
    r = subprocess.run(['g++', '-std=c++20', '-O1', '-w', '-pthread', '-I' + HERE,
                        '-DKERNEL_INC="%s"' % inc, *flags, os.path.join(HERE, 'driver.cpp'), '-o', exe],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit('g++ failed for %s:\n%s' % (entry, r.stderr[:4000]))
    return exe


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('files', nargs='+')
    ap.add_argument('--arch', default='sm_80')
    ap.add_argument('--shapes', default='200x136x72,33x17x40,129x257x100')
    ap.add_argument('--schedc', default=os.path.join(ROOT, 'build', 'cli', 'schedc'))
    a = ap.parse_args()
    bad = 0
    with tempfile.TemporaryDirectory() as work:
        for path in a.files:
            src = subprocess.run([a.schedc, 'emit', '--arch', a.arch, path], capture_output=True,
                                 text=True, check=True).stdout
            text = open(path).read()
            a_col = int(bool(re.search(r'^layout A col', text, re.M)))
            b_col = int(bool(re.search(r'^layout B col', text, re.M)))
            code = strip(src)
            threads = re.search(r'constexpr int THREADS = (\d+);', code).group(1)
            bm, bn = re.search(r'constexpr int BM = (\d+), BN = (\d+)', code).groups()
            entries = re.findall(r'^(\w+)\(int M, int N, int K', code, re.M)
            exes = {e: build(code, e, work) for e in entries}
            for shape in a.shapes.split(','):
                M, N, K = (int(x) for x in shape.split('x'))
                ra, rb = (M if a_col else K), (K if b_col else N)
                for e, exe in exes.items():
                    fallback = e.endswith('_fallback')
                    # main entry: leading dimensions multiples of 16 bytes; fallback: ld + 1
                    ld = (lambda r: r + 1) if fallback else (lambda r: (r + 7) // 8 * 8)
                    r = subprocess.run([exe, *map(str, (M, N, K, ld(ra), ld(rb), ld(N), a_col, b_col,
                                                         threads, bm, bn))],
                                       capture_output=True, text=True)
                    ok = r.returncode == 0 and r.stdout.strip() == 'ok'
                    bad += not ok
                    print('%s %s %s: %s %s' % (os.path.basename(path), shape, e,
                                               'ok' if ok else 'MISMATCH', r.stderr.strip()[:300]))
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
