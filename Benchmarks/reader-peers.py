"""Note counts of Carillon's SMF reader against mido's and symusic's, file by file.

Usage: reader-peers.py FOLDER... [--carillon PATH] [--all] [--json OUT] [--cache FILE]

For every file under each FOLDER (recursively, any name), counts the notes each
reader finds: Carillon (`carillon inspect --json`, its `noteCount`: note-ons with
velocity > 0), mido (note_on messages with velocity > 0) and symusic (notes of
all tracks, loaded in ticks). A file a reader refuses counts as `-`.

Each peer is run twice: as a user runs it (strict: mido and symusic refuse a
file with a data byte over 127) and lenient (mido `clip=True`, symusic
`sanitize_data=True`: such a byte is clamped to 127 and the file read on).
symusic pairs note-ons with note-offs, so it counts fewer notes than note-ons
where a note-on has no note-off; that is why "the peers agree" is the test.

Prints one line per file where mido and symusic agree and Carillon does not
(`DIFF` strict; `LENIENT` where only the lenient peers agree; with `--all`,
also `PEERS` where neither pair agrees), then the totals. Exit status 0
whatever the counts: this is evidence, not a test. `--cache` keeps the peers'
counts (by path, size and modification time) between runs, so a second run
only runs Carillon. Needs no network: mido and
symusic come from a venv made once, e.g.
    python3 -m venv /work/venv-reader && /work/venv-reader/bin/pip install mido symusic
"""
import argparse
import json
import os
import subprocess
import sys
import warnings

import mido
import symusic

here = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("folders", nargs="+")
parser.add_argument("--carillon", default=os.path.join(here, "..", ".build", "debug", "carillon"))
parser.add_argument("--all", action="store_true", help="also list files where mido and symusic disagree")
parser.add_argument("--json", help="write every file's counts to this file")
parser.add_argument("--cache", help="read and write mido's and symusic's counts here")
args = parser.parse_args()


def carillon_notes(path):
    try:
        r = subprocess.run([args.carillon, "inspect", "--json", path], capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None
    if r.returncode != 0:
        return None
    return json.loads(r.stdout)["noteCount"]


def mido_notes(path, lenient=False):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = mido.MidiFile(path, clip=lenient)
    except Exception:
        return None
    return sum(1 for t in f.tracks for m in t if m.type == "note_on" and m.velocity > 0)


def symusic_notes(path, lenient=False):
    try:
        with open(path, "rb") as f:
            s = symusic.Score.from_midi(f.read(), ttype="tick", sanitize_data=lenient)
    except Exception:
        return None
    return sum(len(t.notes) for t in s.tracks)


def show(n):
    return "-" if n is None else str(n)


files = sorted(os.path.join(d, name) for folder in args.folders
               for d, _, names in os.walk(folder) for name in names)
cache = {}
if args.cache and os.path.exists(args.cache):
    with open(args.cache) as f:
        cache = json.load(f)
rows = []
peers_agree = disagreements = peers_differ = 0
lenient_agree = lenient_disagreements = 0
for path in files:
    st = os.stat(path)
    key = f"{path}|{st.st_size}|{st.st_mtime_ns}"
    if key not in cache:
        cache[key] = [mido_notes(path), symusic_notes(path), mido_notes(path, True), symusic_notes(path, True)]
    c, (m, s, ml, sl) = carillon_notes(path), cache[key]
    rows.append({"file": path, "carillon": c, "mido": m, "symusic": s, "mido_clip": ml, "symusic_sanitize": sl})
    agree = m is not None and m == s
    if not agree and ml is not None and ml == sl:
        lenient_agree += 1
        if c != ml:
            lenient_disagreements += 1
            print(f"LENIENT carillon {show(c):>6}  mido {show(ml):>6}  symusic {show(sl):>6}  {path}", flush=True)
    if agree:
        peers_agree += 1
        if c != m:
            disagreements += 1
            print(f"DIFF    carillon {show(c):>6}  mido {show(m):>6}  symusic {show(s):>6}  {path}", flush=True)
    elif m is not None or s is not None:
        peers_differ += 1
        if args.all:
            print(f"PEERS   carillon {show(c):>6}  mido {show(m):>6}  symusic {show(s):>6}  {path}", flush=True)

both_refuse = sum(1 for r in rows if r["mido"] is None and r["symusic"] is None)
print(f"files: {len(files)}; mido and symusic agree on {peers_agree}, Carillon differs from them on {disagreements}; "
      f"peers disagree on {peers_differ}; both peers refuse {both_refuse} "
      f"(Carillon reads {sum(1 for r in rows if r['mido'] is None and r['symusic'] is None and r['carillon'] is not None)} of those)")
print(f"lenient peers (clamping) agree on {lenient_agree} more files, Carillon differs from them on {lenient_disagreements}")
if args.cache:
    with open(args.cache, "w") as f:
        json.dump(cache, f)
if args.json:
    with open(args.json, "w") as out:
        json.dump(rows, out, indent=1)
