#!/usr/bin/env python3
"""Where a process's peak resident memory goes: runs a command, reads its
/proc/PID/smaps every INTERVAL seconds (default 0.02) and prints, for the
sample with the largest total Rss, each group of mappings (the executable,
each shared library, the heap, anonymous mappings, stacks) with its Rss,
Private_Dirty and Shared_Clean in KiB, and the per-mapping maxima over the
whole run beside them. Benchmark, not a test.

    Benchmarks/smaps_peak.py [--interval S] [--top N] -- COMMAND ARGS...
"""
import argparse
import collections
import os
import subprocess
import sys
import time

FIELDS = ("Rss", "Private_Dirty", "Shared_Clean")


def read_smaps(pid):
    """[(name, start, {field: KiB})] for each mapping, or None once the process is gone."""
    try:
        with open(f"/proc/{pid}/smaps") as f:
            text = f.read()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    maps, current = [], None
    for line in text.splitlines():
        head = line.split(None, 1)[0]
        if "-" in head and not head.endswith(":"):
            parts = line.split(None, 5)
            name = parts[5] if len(parts) > 5 else "[anon]"
            perms = parts[1]
            current = (name, head.split("-")[0], perms, {})
            maps.append(current)
        elif current is not None and head[:-1] in FIELDS:
            current[3][head[:-1]] = int(line.split()[1])
    return maps


def group(name, exe):
    if name == exe:
        return "executable"
    if name.startswith("/"):
        return os.path.basename(name)
    return name


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--interval", type=float, default=0.02)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    exe = os.path.realpath(cmd[0])
    proc = subprocess.Popen(cmd)
    best, best_total, samples = None, -1, 0
    per_mapping_max = collections.defaultdict(lambda: dict.fromkeys(FIELDS, 0))
    while proc.poll() is None:
        maps = read_smaps(proc.pid)
        if maps:
            samples += 1
            total = sum(m[3].get("Rss", 0) for m in maps)
            if total > best_total:
                best_total, best = total, maps
            for name, start, perms, f in maps:
                key = (name, start, perms)
                for k in FIELDS:
                    per_mapping_max[key][k] = max(per_mapping_max[key][k], f.get(k, 0))
        time.sleep(a.interval)
    hwm = None
    if best is None:
        sys.exit(f"smaps_peak: no sample of {cmd[0]} (it ended within {a.interval} s)")
    groups = collections.defaultdict(lambda: dict.fromkeys(FIELDS, 0))
    maxima = collections.defaultdict(lambda: dict.fromkeys(FIELDS, 0))
    for name, start, perms, f in best:
        g = group(name, exe)
        for k in FIELDS:
            groups[g][k] += f.get(k, 0)
    for (name, start, perms), f in per_mapping_max.items():
        g = group(name, exe)
        for k in FIELDS:
            maxima[g][k] += f[k]
    libs = [g for g in groups if g.endswith(".so") or ".so." in g]
    print(f"exit {proc.returncode}; {samples} samples; peak sample total Rss {best_total} KiB "
          f"({best_total / 1024:.1f} MiB); {len(libs)} shared libraries")
    print(f"{'group':40} {'Rss':>8} {'PrivDirty':>9} {'ShClean':>8}   {'maxRss':>8}")
    for g, f in sorted(groups.items(), key=lambda kv: -kv[1]["Rss"])[: a.top]:
        print(f"{g[:40]:40} {f['Rss']:8} {f['Private_Dirty']:9} {f['Shared_Clean']:8}   {maxima[g]['Rss']:8}")
    lib_rss = sum(groups[g]["Rss"] for g in libs)
    print(f"{'all shared libraries':40} {lib_rss:8}")
    by_perm = collections.defaultdict(int)
    for name, start, perms, f in best:
        if group(name, exe) == "executable":
            by_perm[perms] += f.get("Rss", 0)
    print("executable by permission: " + ", ".join(f"{k} {v}" for k, v in sorted(by_perm.items())))
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
