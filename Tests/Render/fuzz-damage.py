#!/usr/bin/env python3
"""Damaged real files render in under a minute each, or stop at a stated limit.

Mutates the openmsx songs (Debian's openttd-openmsx, real Standard MIDI Files)
where scraped files are damaged: random byte changes in delta times (a changed
byte of a delta's variable-length number, or its continuation bit, so the rest
of the track may be read out of step) and in Set Tempo events' three bytes.
Renders each mutated file at 8 kHz with a release build, one at a time, and
reports the wall time of each (the largest must stay under 60 s), the exit
status (0, or 1 with one clean "carillon: error:" line: no signal, no crash)
and what the manifest says was cut.

    swift build -c release --product carillon
    Tests/Render/fuzz-damage.py [--count 240] [--seed 30] [--binary .build/release/carillon] [--keep DIR]

Exits non-zero when a render took 60 s or more, died on a signal or failed
without a clean error. The mutations depend only on --seed.
"""
import argparse
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

OPENMSX = "/usr/share/games/openttd/baseset/openmsx"
FONT = "/usr/share/sounds/sf2/TimGM6mb.sf2"
LIMIT = 60.0


def varlen(data, p):
    """The variable-length quantity at p and the offset after it."""
    n = 0
    while True:
        c = data[p]
        p += 1
        n = (n << 7) | (c & 0x7F)
        if c < 0x80:
            return n, p


def spots(data):
    """Offsets of delta-time bytes and of Set Tempo data bytes, walking each MTrk."""
    deltas, tempos = [], []
    pos = 14
    while pos + 8 <= len(data):
        kind, length = data[pos:pos + 4], int.from_bytes(data[pos + 4:pos + 8], "big")
        start, end = pos + 8, min(len(data), pos + 8 + length)
        pos = end
        if kind != b"MTrk":
            continue
        p, status = start, 0
        try:
            while p < end:
                while True:                      # delta time
                    deltas.append(p)
                    b = data[p]
                    p += 1
                    if b < 0x80:
                        break
                b = data[p]
                if b == 0xFF:                    # meta
                    meta = data[p + 1]
                    n, p = varlen(data, p + 2)
                    if meta == 0x51 and n == 3:
                        tempos += [p, p + 1, p + 2]
                    p += n
                    status = 0
                elif b in (0xF0, 0xF7):          # SysEx
                    n, p = varlen(data, p + 1)
                    p += n
                    status = 0
                else:
                    if b >= 0x80:
                        status = b
                        p += 1
                    p += 1 if (status & 0xF0) in (0xC0, 0xD0) else 2
        except IndexError:
            pass
    return deltas, tempos


def mutate(data, rng):
    """1 to 4 byte changes in deltas and tempos; returns the bytes and what was done."""
    data = bytearray(data)
    deltas, tempos = spots(data)
    done = []
    for _ in range(rng.randint(1, 4)):
        use_tempo = tempos and (not deltas or rng.random() < 0.4)
        pool = tempos if use_tempo else deltas
        at = rng.choice(pool)
        old = data[at]
        how = rng.choice(["random", "flip", "high"])
        if how == "random":
            new = rng.randrange(256)
        elif how == "flip":
            new = old ^ (1 << rng.randrange(8))
        else:                                     # a large value: the damage that makes hours
            new = rng.randrange(0x70, 0x100)
        data[at] = new
        done.append(f"{'tempo' if use_tempo else 'delta'}@{at}:{old:02x}->{new:02x}")
    return bytes(data), done


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--binary", default=os.path.join(here, "../../.build/release/carillon"))
    ap.add_argument("--count", type=int, default=240)
    ap.add_argument("--seed", type=int, default=30)
    ap.add_argument("--rate", type=int, default=8000)
    ap.add_argument("--keep", help="keep the mutated files and outputs in this folder")
    ap.add_argument("extra", nargs="*", help="more carillon render options (after --)")
    a = ap.parse_args()
    songs = sorted(glob.glob(f"{OPENMSX}/*.mid"))
    if not songs:
        sys.exit(f"{sys.argv[0]}: no openmsx songs in {OPENMSX} (apt-get install openttd-openmsx)")
    rng = random.Random(a.seed)
    work = a.keep or tempfile.mkdtemp(prefix="carillon-fuzz-damage-")
    os.makedirs(work, exist_ok=True)
    rows, bad = [], []
    for i in range(a.count):
        song = songs[i % len(songs)]
        data, done = mutate(open(song, "rb").read(), rng)
        name = f"{i:03d}-{os.path.basename(song)}"
        path = os.path.join(work, name)
        open(path, "wb").write(data)
        manifest = os.path.join(work, f"{i:03d}.jsonl")
        cmd = [a.binary, "render", path, "-o", os.path.join(work, name[:-4] + ".wav"), "-r", str(a.rate),
               "--threads", "1", "--soundfont", FONT, "--manifest", manifest, "-q"] + a.extra
        start = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=3 * LIMIT)
            status, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            status, err = "timeout", ""
        wall = time.monotonic() - start
        line = {}
        if os.path.exists(manifest):
            with open(manifest) as f:
                text = f.read().strip()
            line = json.loads(text.splitlines()[-1]) if text else {}
        clean_error = status == 1 and err.startswith("carillon: error:") or (
            status == 1 and line.get("status") == "failed")
        ok = wall < LIMIT and (status == 0 or clean_error)
        row = {"file": name, "mutations": done, "status": status, "wall": round(wall, 2),
               "rendered": line.get("rendered_seconds"), "piece": line.get("piece_seconds"),
               "limits": line.get("limits"), "dead_air": line.get("dead_air_seconds"),
               "gaps_cut": line.get("gaps_cut"), "error": line.get("error")}
        rows.append(row)
        if not ok:
            bad.append(row)
            print(f"BAD {name}: status {status}, {wall:.1f} s: {err.strip()[:300]}", flush=True)
        if not a.keep:
            for f in glob.glob(os.path.join(work, f"{i:03d}*")):
                os.remove(f)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    walls = sorted(r["wall"] for r in rows)
    ok = [r for r in rows if r["status"] == 0]
    failed = [r for r in rows if r["status"] != 0]
    limited = [r for r in ok if r["limits"]]
    print(f"{len(rows)} mutated files (seed {a.seed}, {a.rate} Hz): {len(ok)} rendered, {len(failed)} refused "
          f"with a clean error, {len(bad)} bad")
    print(f"wall time: max {walls[-1]:.2f} s, median {walls[len(walls) // 2]:.2f} s, total {sum(walls):.0f} s")
    longest = max(rows, key=lambda r: r["wall"])
    print(f"slowest: {longest['file']} {longest['mutations']}: {longest['wall']} s, rendered {longest['rendered']} s, "
          f"limits {longest['limits']}")
    rendered = [r["rendered"] for r in ok if r["rendered"] is not None]
    if rendered:
        print(f"rendered audio: max {max(rendered):.1f} s")
    kinds = {}
    for r in limited:
        for text in r["limits"]:
            key = "tempo" if "tempo" in text else "thin" if "thins out" in text else "max-duration" if "max-duration" in text else "other"
            kinds[key] = kinds.get(key, 0) + 1
    print(f"limits applied: {len(limited)} files {kinds}; dead air left out in "
          f"{sum(1 for r in ok if (r['dead_air'] or 0) > 0)}; gaps cut in {sum(1 for r in ok if (r['gaps_cut'] or 0) > 0)}")
    errors = {}
    for r in failed:
        key = (r["error"] or str(r["status"]))[:60]
        errors[key] = errors.get(key, 0) + 1
    for k, n in sorted(errors.items(), key=lambda kv: -kv[1])[:5]:
        print(f"  refused {n}×: {k}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
