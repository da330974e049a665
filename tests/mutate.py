#!/usr/bin/env python3
"""mutate.py: the test of the stand-in's tests. Plants small bugs, one at a time, in a scratch
copy of the tree, in the code that decides GPU correctness (the plan in host/gen/plan.c, the
generator's barriers in host/gen/cgen.c, kernels/block.cuh, kernels/grid.cuh,
device/compiled_kernel.cuh), builds what the tests need and runs test_standin, test_cost,
test_sched, test_gen and test_gen --mutants after each, stopping at the first that fails. A
mutation that every test passes survives. Prints each outcome, then the score and the survivors.

Classes (issue 37): a barrier removed, a counter or parity not advanced, an index one past, a
plan rule loosened. Each mutation is a text replacement that must match exactly once, so a
mutation that no longer applies (the code moved) says so instead of passing for a catch.

A tool run by hand, not in CI: each mutation rebuilds and runs a few minutes of tests (an hour
and more for the whole list on two loaded cores). Usage:
    python3 tests/mutate.py [--scratch DIR] [--only ID,ID,...] [--list] [--stress] [--keep]
--scratch  where the copy and its build go (default /tmp/cfx-mutate); the copy is made from
           the working tree's files as they are (committed or not), with git ls-files
--only     run these mutations (their ids, below) and no others
--list     print the mutations and exit
--skip-clean  do not first check that the unmutated copy passes (when it was just checked)
--timeout  seconds a test may run (default 900); a mutation whose test runs past it is
           reported as timed out (a machine too loaded), counted neither way. A mutant that
           hangs fails its test in seconds instead: the stand-in stops a launch where a block
           waits at a grid barrier that can never complete (another block has ended) or that
           runs far longer than any of the tests' (tests/ck_host.h's watchdog for test_gen,
           tests/persist_host.cpp's launch for test_sched), with one line saying where each
           block stands, as a GPU would hang (and the README's ctest would time out)
--stress   run the stress forms (CFX_STRESS=1: test_gen --stress, test_sched --stress,
           test_gen --mutants --stress) for the survivors of the default tests
The detector (tests/race_host.h) is on, as in the suite; CFX_STANDIN_RACE=0 in the
environment turns it off, to see what the tests catch without it.
Exit status: 0 when every mutation was caught, 1 otherwise, 2 when one did not apply.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

# (id, file, old text, new text, what it breaks)
MUTATIONS = [
    # kernels/grid.cuh: the counting barrier
    ("grid_target_early", "kernels/grid.cuh",
     "return k_grid_load_acquire(word) >= target;", "return k_grid_load_acquire(word) + 1 >= target;",
     "the grid barrier completes when all but one block have arrived"),
    ("grid_target_stale", "kernels/grid.cuh",
     "return (old / nblocks + 1) * nblocks;", "return (old / nblocks) * nblocks;",
     "the grid barrier's target is the one it has already passed"),
    # device/compiled_kernel.cuh
    ("combine_counter", "device/compiled_kernel.cuh",
     "    *acc = k_block_reduce(red, m, op, dtype);\n    (*combines)++;",
     "    *acc = k_block_reduce(red, m, op, dtype);",
     "ck_combine leaves the combine counter: the next combine reuses the partials slow blocks read"),
    ("batch_counter", "device/compiled_kernel.cuh",
     "        acc[k] = k_block_reduce(red, m, op[k], dtype[k]);\n    }\n    (*combines)++;",
     "        acc[k] = k_block_reduce(red, m, op[k], dtype[k]);\n    }",
     "ck_combine_batch leaves the combine counter"),
    ("combine_parity", "device/compiled_kernel.cuh",
     "    k_acc *part = a.partials + (uint64_t)(*combines & 1u) * CK_BATCH_MAX * gridDim.x;\n    if (threadIdx.x == 0) {",
     "    k_acc *part = a.partials;\n    if (threadIdx.x == 0) {",
     "ck_combine's partials never alternate"),
    ("combine_one_past", "device/compiled_kernel.cuh",
     "    for (int32_t b = threadIdx.x; b < (int32_t)gridDim.x; b += blockDim.x)\n        k_reduce_merge(op, dtype, &m, &part[b]);",
     "    for (int32_t b = threadIdx.x; b <= (int32_t)gridDim.x; b += blockDim.x)\n        k_reduce_merge(op, dtype, &m, &part[b]);",
     "ck_combine merges one partial past the grid's (a slot no block wrote: poisoned)"),
    ("barrier_sync_before", "device/compiled_kernel.cuh",
     "    __shared__ int s_stop;\n    __syncthreads();", "    __shared__ int s_stop;",
     "the grid barrier's block barrier before thread 0 arrives, removed"),
    ("barrier_sync_after", "device/compiled_kernel.cuh",
     "    __syncthreads();\n    CK_AFTER_BARRIER();", "    CK_AFTER_BARRIER();",
     "the grid barrier's block barrier after thread 0 passes, removed"),
    ("matvec_sync", "device/compiled_kernel.cuh",
     "    k_matvec_rows(dtype, dst, a, x, k, lo, hi, stash);\n    __syncthreads();",
     "    k_matvec_rows(dtype, dst, a, x, k, lo, hi, stash);",
     "ck_matvec_rows' block barrier after the rows, removed"),
    ("share_one_past", "device/compiled_kernel.cuh",
     "*hi = *lo + base32 + (b < rem32 ? 1 : 0);", "*hi = *lo + base32 + (b <= rem32 ? 1 : 0);",
     "a block's share ends one element past its own (32-bit shares)"),
    # kernels/block.cuh
    ("reduce_one_past", "kernels/block.cuh",
     "v = lane < nwarps ? (K_RACE_RS(&red[lane], sizeof *red), red[lane]) : none;",
     "v = lane <= nwarps ? (K_RACE_RS(&red[lane], sizeof *red), red[lane]) : none;",
     "the block reduction's second level reads one slot past the warps' partials"),
    # (the block reduction's third path, k_warp_merge's, is reached by no op today: every op is
    # a sum, an extreme or a vote, so a mutation there is equivalent and is not listed)
    ("stash_one_past", "kernels/block.cuh",
     "                    K_RACE_W(&stash[row0 + r - lo], sizeof(float));\n                    stash[row0 + r - lo] = (float)sum;",
     "                    K_RACE_W(&stash[row0 + r - lo + 1], sizeof(float));\n                    stash[row0 + r - lo + 1] = (float)sum;",
     "a matrix-vector product's rows stashed one element past their place"),
    ("reduce_sync_level", "kernels/block.cuh",
     "                    red[warp] = v;\n                }\n                __syncthreads();",
     "                    red[warp] = v;\n                }",
     "the block reduction's barrier between its two levels, removed"),
    ("reduce_sync_root", "kernels/block.cuh",
     "        __syncthreads();\n        K_RACE_RS(&red[32], sizeof *red);\n        return red[32];\n    }",
     "        K_RACE_RS(&red[32], sizeof *red);\n        return red[32];\n    }",
     "the block reduction's barrier before every thread reads the root, removed"),
    ("tiles_sync_load", "kernels/block.cuh",
     "            __syncthreads();\n            int64_t kn", "            int64_t kn",
     "the tiled product's barrier between loading a tile and using it, removed"),
    ("tiles_sync_reuse", "kernels/block.cuh",
     "            }\n            __syncthreads();\n        }\n        if (row < m && col < n)",
     "            }\n        }\n        if (row < m && col < n)",
     "the tiled product's barrier before the next tile overwrites this one, removed"),
    # host/gen/cgen.c
    ("cgen_split_close", "host/gen/cgen.c",
     "    line(g, \"}\");\n    block_barrier(g, BARRIER_PHASE);\n}\n\nstatic int scalar_record",
     "    line(g, \"}\");\n}\n\nstatic int scalar_record",
     "the block barrier after a split loop, removed"),
    ("cgen_war_barrier", "host/gen/cgen.c",
     "    if (g->cuda && g->unfenced)\n        block_barrier(g, BARRIER_WAR);",
     "    if (g->cuda && g->unfenced)\n        (void)0;",
     "the write-after-read block barrier before a loop over a tensor's elements, removed"),
    ("cgen_ahead_before", "host/gen/cgen.c",
     "                 (int)w);\n            grid_barrier(g, entry);\n            g->ahead_out",
     "                 (int)w);\n            g->ahead_out",
     "the grid barrier before the entry's copy of a product computed ahead, removed"),
    ("cgen_ahead_after", "host/gen/cgen.c",
     "            g->ahead_out = -1;\n            grid_barrier(g, entry);\n        }",
     "            g->ahead_out = -1;\n        }",
     "the grid barrier after the entry's copy of a product computed ahead, removed"),
    ("cgen_parity", "host/gen/cgen.c",
     "line(g, \"par%d_ ^= 1u; /* the other buffer of the tensors that alternate */\", (int)i);",
     "line(g, \"/* par%d_ not advanced */\", (int)i);",
     "the alternating buffers' parity not advanced"),
    ("cgen_region_exit", "host/gen/cgen.c",
     "    publish_scalars(g);\n    grid_barrier(g, i);\n    reload_scalars(g);",
     "    publish_scalars(g);\n    reload_scalars(g);",
     "the grid barrier at a one-block region's exit, removed"),
    ("cgen_barrier_before", "host/gen/cgen.c",
     "    if ((f & SCHED_F_BARRIER_BEFORE) && !(f & SCHED_F_ONE_BLOCK))\n        grid_barrier(g, i);",
     "    if ((f & SCHED_F_BARRIER_BEFORE) && !(f & SCHED_F_ONE_BLOCK) && i % 2)\n        grid_barrier(g, i);",
     "the plan's grid barriers before even records, left out"),
    # host/gen/plan.c: plan rules loosened
    ("sched_batch_write", "host/gen/plan.c",
     "            since[j] = lastw[r->b] > lastt[r->a] ? lastw[r->b] : lastt[r->a];",
     "            since[j] = lastt[r->a];",
     "a reduction joins an earlier batch though a record between writes its operand"),
    ("sched_batch_target", "host/gen/plan.c",
     "        brk[j] = target[j] || (plan->flags[j] & (skip | SCHED_F_REGION_ENTRY | SCHED_F_REGION_EXIT)) ||",
     "        brk[j] = (plan->flags[j] & (skip | SCHED_F_REGION_ENTRY | SCHED_F_REGION_EXIT)) ||",
     "a reduction joins an earlier batch across a branch target"),
    ("sched_batch_touch", "host/gen/plan.c",
     "            since[j] = lastw[r->b] > lastt[r->a] ? lastw[r->b] : lastt[r->a];",
     "            since[j] = lastw[r->b];",
     "a reduction joins an earlier batch though a record between touches its result"),
]

TESTS = [
    ("test_standin", ["tests/test_standin"]),
    ("test_cost", ["bash", "{src}/tests/test_cost.sh", "{build}/cfx", "{src}", "{build}/tests"]),
    ("test_sched", ["tests/test_sched"]),
    ("test_gen", ["tests/test_gen"]),
    ("test_gen_mutants", ["tests/test_gen", "--mutants"]),
]
STRESS = [
    ("test_sched_stress", ["tests/test_sched", "--stress"]),
    ("test_gen_stress", ["tests/test_gen", "--stress"]),
    ("test_gen_mutants_stress", ["tests/test_gen", "--mutants", "--stress"]),
]
TARGETS = ["cfx", "test_standin", "test_sched", "test_gen"]
TIMEOUT = 900  # seconds a test may run (--timeout); one that runs past it is reported apart


def sh(cmd, cwd=None, timeout=None, env=None):
    try:
        r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, env=env)
        return r.returncode, r.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode("utf-8", "replace") if e.stdout else ""
        return 124, out + "\n(timed out)"


def make_copy(src, scratch):
    """The working tree's files (tracked and untracked, not ignored) into scratch/src."""
    dst = os.path.join(scratch, "src")
    rc, out = sh(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=src)
    if rc != 0:
        sys.exit("mutate.py: git ls-files failed in %s:\n%s" % (src, out))
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    for rel in out.split("\0"):
        if not rel or not os.path.isfile(os.path.join(src, rel)):
            continue
        os.makedirs(os.path.dirname(os.path.join(dst, rel)) or dst, exist_ok=True)
        shutil.copy2(os.path.join(src, rel), os.path.join(dst, rel))
    return dst


def build(src, bdir):
    if not os.path.isfile(os.path.join(bdir, "CMakeCache.txt")):
        rc, out = sh(["cmake", "-S", src, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release", "-DCFX_CUDA=OFF"])
        if rc != 0:
            return rc, out
    return sh(["cmake", "--build", bdir, "-j2", "--target"] + TARGETS)


def run_tests(src, bdir, tests, env):
    """The first test that fails, with the tail of its output; None when all pass."""
    os.makedirs(os.path.join(bdir, "tests", "work"), exist_ok=True)
    for name, cmd in tests:
        cmd = [c.format(src=src, build=bdir) for c in cmd]
        if not cmd[0].startswith("bash"):
            cmd[0] = os.path.join(bdir, cmd[0]) if not os.path.isabs(cmd[0]) else cmd[0]
        rc, out = sh(cmd, cwd=os.path.join(bdir, "tests"), timeout=TIMEOUT, env=env)
        if rc not in (0, 77):
            return name, rc, out[-1500:]
    return None


def main():
    global TIMEOUT
    ap = argparse.ArgumentParser()
    ap.add_argument("--scratch", default="/tmp/cfx-mutate")
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--stress", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy afterwards")
    ap.add_argument("--timeout", type=int, default=TIMEOUT)
    ap.add_argument("--skip-clean", action="store_true", help="do not run the tests on the unmutated copy first")
    args = ap.parse_args()
    TIMEOUT = args.timeout
    muts = MUTATIONS
    if args.only:
        want = set(args.only.split(","))
        unknown = want - {m[0] for m in muts}
        if unknown:
            sys.exit("mutate.py: no mutation %s" % ", ".join(sorted(unknown)))
        order = args.only.split(",")
        muts = sorted([m for m in muts if m[0] in want], key=lambda m: order.index(m[0]))
    if args.list:
        for m in muts:
            print("%-22s %-28s %s" % (m[0], m[1], m[4]))
        return 0
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.makedirs(args.scratch, exist_ok=True)
    src = make_copy(here, args.scratch)
    bdir = os.path.join(args.scratch, "build")
    env = dict(os.environ)
    rc, out = build(src, bdir)
    if rc != 0:
        sys.exit("mutate.py: the unmutated copy does not build:\n" + out[-3000:])
    failed = None if args.skip_clean else run_tests(src, bdir, TESTS, env)
    if failed:
        sys.exit("mutate.py: the unmutated copy fails %s (status %d):\n%s" % failed)
    caught, survivors, broken, timed_out = [], [], [], []
    for mid, rel, old, new, what in muts:
        path = os.path.join(src, rel)
        with open(path) as f:
            text = f.read()
        if text.count(old) != 1:
            print("%-22s DOES NOT APPLY (%d matches in %s)" % (mid, text.count(old), rel), flush=True)
            broken.append(mid)
            continue
        t0 = time.time()
        with open(path, "w") as f:
            f.write(text.replace(old, new))
        try:
            rc, out = build(src, bdir)
            if rc != 0:
                verdict = ("caught", "the build", rc, out[-800:])
            else:
                failed = run_tests(src, bdir, TESTS, env)
                if not failed and args.stress:
                    senv = dict(env, CFX_STRESS="1")
                    failed = run_tests(src, bdir, STRESS, senv)
                verdict = ("caught",) + failed if failed else ("survived", None, 0, "")
        finally:
            with open(path, "w") as f:
                f.write(text)
        dt = time.time() - t0
        if verdict[0] == "caught" and verdict[2] == 124:
            timed_out.append(mid)  # a hang, or a machine too loaded: not counted either way
            print("%-22s TIMED OUT in %s (%.0f s): a hang, or a loaded machine; run it again alone" %
                  (mid, verdict[1], dt), flush=True)
        elif verdict[0] == "caught":
            caught.append(mid)
            lines = verdict[3].splitlines()  # the stand-in's own report first, then a failed check
            tail = [l for k in (": race detector:", "a hang (on a GPU)", "FAIL", "expected") for l in lines if k in l]
            print("%-22s caught by %s (status %d, %.0f s)%s" % (mid, verdict[1], verdict[2], dt,
                  (": " + tail[0].strip()[:160]) if tail else ""), flush=True)
        else:
            survivors.append(mid)
            print("%-22s SURVIVED (%.0f s): %s" % (mid, dt, what), flush=True)
    build(src, bdir)  # back to the unmutated build
    n = len(caught) + len(survivors)
    print("mutate.py: %d of %d mutations caught (%.0f%%)%s" % (len(caught), n, 100.0 * len(caught) / max(n, 1),
          ", survivors: " + ", ".join(survivors) if survivors else ""))
    if timed_out:
        print("mutate.py: %d timed out (not counted): %s" % (len(timed_out), ", ".join(timed_out)))
    if broken:
        print("mutate.py: %d did not apply: %s" % (len(broken), ", ".join(broken)))
    if not args.keep:
        shutil.rmtree(args.scratch, ignore_errors=True)
    return 2 if broken else 0 if not survivors else 1


if __name__ == "__main__":
    sys.exit(main())
