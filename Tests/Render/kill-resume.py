#!/usr/bin/env python3
"""A batch killed with SIGKILL at 200 pseudo-random moments and resumed with
--skip-existing ends equal, byte for byte, to an uninterrupted run; after
every kill each input is complete or without audio (its audio is the mark of
a finished rendering, moved into place after its labels, stems, report and
manifest line). The batch writes a manifest (--manifest): after every kill
each of its lines is an uninterrupted run's line (timing aside), and after
the final run it holds one line per input, each equal to the uninterrupted
run's (render_seconds aside) and to the line in the input's output set
(NAME.manifest.json), so an input finished before a kill keeps its figures.

  Tests/Render/kill-resume.py [CARILLON]   (default .build/debug/carillon)
  KILLS=50 SEED=7 Tests/Render/kill-resume.py

40 inputs (the openmsx songs in two folders, cut at 2 s) rendered with
--labels --stems --stems-by track at 8 kHz with TimGM6mb, two workers. Every
other kill waits for a rendering's first file to reach its final name and
comes 0-30 ms later, the run going under strace, which delays each rename by
10 ms (nothing changed in the binary): so kills land in the middle of a set's
moves (an audio moved before its labels is caught). The others come at a
random moment within startup + 3 inputs' time. After a kill, one finished input in four loses
a companion (a label file, its report, its manifest line, a stem file or its stems folder) so
the runs keep having work, and `--skip-existing` must render it again rather
than take its audio as done. Exits non-zero on the first broken invariant.
"""

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import json

KILLS = int(os.environ.get("KILLS", "200"))
SEED = int(os.environ.get("SEED", "28"))
OPENMSX = "/usr/share/games/openttd/baseset/openmsx"
FONT = "/usr/share/sounds/sf2/TimGM6mb.sf2"
STAGED = ".carillon-part"

root = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
carillon = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, ".build/debug/carillon"))
work = tempfile.mkdtemp(prefix="carillon-kill-")
corpus = os.path.join(work, "corpus")
songs = sorted(f for f in os.listdir(OPENMSX) if f.endswith(".mid"))[:20]
for sub in ("a", "b"):
    os.makedirs(os.path.join(corpus, sub))
    for song in songs:
        shutil.copy(os.path.join(OPENMSX, song), os.path.join(corpus, sub, song))
inputs = [f"{sub}/{song[:-4]}" for sub in ("a", "b") for song in songs]
assert len(inputs) == 40


def command(out):
    return [carillon, "render", corpus, "--output-dir", f"{out}/audio", "--labels", "--stems", f"{out}/stems",
            "--stems-by", "track", "-r", "8000", "--soundfont", FONT, "--max-duration", "2", "--jobs", "2", "-q",
            "--manifest", f"{out}/manifest.jsonl"]


def files_of(out, name):
    """The set's files, by path: audio, labels, report, manifest line; its stems folder apart."""
    base = f"{out}/audio/{name}"
    return [f"{base}.wav", f"{base}.notes.csv", f"{base}.beats.csv", f"{base}.tempo.csv", f"{base}.stems.json",
            f"{base}.manifest.json"], f"{out}/stems/{name}"


TIMING = "render_seconds"


def figures(data):
    """A manifest line without its timing field (the only one that differs between runs), or None when not a line."""
    try:
        line = json.loads(data)
    except ValueError:
        return None
    if not isinstance(line, dict):
        return None
    line.pop(TIMING, None)
    return line


def same(rel, got, want):
    """A set's file as the uninterrupted run wrote it: bytes, a manifest line's timing aside."""
    if rel.endswith(".manifest.json"):
        return got.endswith(b"\n") and got.count(b"\n") == 1 and figures(got) is not None and figures(got) == figures(want)
    return got == want


def tree(folder):
    found = {}
    for dirpath, _, names in os.walk(folder):
        for n in names:
            path = os.path.join(dirpath, n)
            with open(path, "rb") as f:
                found[os.path.relpath(path, folder)] = f.read()
    return found


def fail(message):
    print(f"FAIL: {message}  (work folder kept: {work})")
    sys.exit(1)


start = time.monotonic()
reference = os.path.join(work, "reference")
out = os.path.join(work, "resumed")   # the same length as "reference": the report's paths differ by the name only
t0 = time.monotonic()
subprocess.run(command(reference), check=True, stderr=subprocess.DEVNULL)
full = time.monotonic() - t0
expected = {}
for name in inputs:
    paths, stems = files_of(reference, name)
    # A report names its stem files by path: the resumed run's folder for the reference's.
    want = {p[len(reference):]: open(p, "rb").read().replace(reference.encode(), out.encode()) for p in paths}
    stem_files = tree(stems)
    if not stem_files:
        fail(f"the reference run wrote no stems for {name}")
    for rel, data in stem_files.items():
        want[f"/stems/{name}/{rel}"] = data
    expected[name] = want
print(f"reference run: {full:.1f} s, {sum(len(v) for v in expected.values())} files")


def manifest_lines(path):
    """The manifest's lines by input: (figures, raw); a cut last line (a kill mid-append) apart."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    cut = lines.pop()   # b"" when the file ends with a newline
    by_input = {}
    for raw in lines:
        line = figures(raw)
        if line is None:
            fail(f"an unreadable line inside the manifest: {raw[:80]!r}")
        by_input.setdefault(line.get("input"), []).append(line)
    return by_input, cut


reference_lines, _ = manifest_lines(f"{reference}/manifest.jsonl")
want_line = {}   # input path -> the uninterrupted run's line, as the resumed run names its outputs
for name in inputs:
    sub, song = name.split("/")
    found = reference_lines.get(os.path.join(corpus, sub, song + ".mid"), [])
    if len(found) != 1 or found[0].get("status") != "ok":
        fail(f"the reference manifest has no single ok line for {name}: {found}")
    want_line[os.path.join(corpus, sub, song + ".mid")] = json.loads(json.dumps(found[0]).replace(reference, out))

rng = random.Random(SEED)
damaged = {}   # name -> inode of its audio when a companion was removed
counts = {"complete": 0, "absent": 0, "damaged": 0}


def check(after):
    for name in inputs:
        want = expected[name]
        audio = f"{out}/audio/{name}.wav"
        if not os.path.exists(audio):
            counts["absent"] += 1
            continue
        inode = os.stat(audio).st_ino
        if damaged.get(name) == inode:
            counts["damaged"] += 1   # not rendered again yet: as the test left it
            continue
        damaged.pop(name, None)
        for rel, data in want.items():
            path = out + rel
            if not os.path.isfile(path):
                fail(f"{after}: {name} has its audio but not {rel}")
            with open(path, "rb") as f:
                if not same(rel, f.read(), data):
                    fail(f"{after}: {rel} differs from the uninterrupted run's")
        counts["complete"] += 1
    # Every whole line of the manifest is an uninterrupted run's line (a cut last line is left by a kill mid-append).
    if os.path.exists(f"{out}/manifest.jsonl"):
        got, _ = manifest_lines(f"{out}/manifest.jsonl")
        for path, lines in got.items():
            for line in lines:
                if line != want_line.get(path):
                    fail(f"{after}: the manifest's line for {path} differs from the uninterrupted run's: {line}")


def damage():
    finished = [n for n in inputs if os.path.exists(f"{out}/audio/{n}.wav") and n not in damaged]
    for name in finished:
        if rng.random() >= 0.25:
            continue
        paths, stems = files_of(out, name)
        choice = rng.randrange(6)
        if choice < 3:
            os.unlink(paths[1 + choice])
        elif choice == 3:
            os.unlink(paths[4])
        elif choice == 4:
            os.unlink(paths[5])
        else:
            stem = sorted(os.listdir(stems))
            if stem and rng.random() < 0.5:
                os.unlink(os.path.join(stems, stem[0]))
            else:
                shutil.rmtree(stems)
        damaged[name] = os.stat(paths[0]).st_ino


def final_names():
    """(name, inode) of every final name in the audio folders and of the stems folders."""
    seen = set()
    for folder in (f"{out}/audio/a", f"{out}/audio/b", f"{out}/stems/a", f"{out}/stems/b"):
        try:
            with os.scandir(folder) as entries:
                for e in entries:
                    if not e.name.startswith("."):
                        seen.add((folder, e.name, e.inode()))
        except FileNotFoundError:
            pass
    return seen


# Startup alone (every input skipped), to place the timed kills.
t0 = time.monotonic()
subprocess.run(command(reference) + ["--skip-existing"], check=True, stderr=subprocess.DEVNULL)
startup = time.monotonic() - t0
per_input = full * 2 / len(inputs)
window = startup + 3 * per_input
print(f"startup {startup:.2f} s, an input {per_input:.2f} s per worker: timed kills within {window:.2f} s")

strace = shutil.which("strace")
for k in range(KILLS):
    cmd = command(out) + ["--skip-existing"]
    # Odd kills: when a rendering's first file reaches its final name, 0-30 ms
    # later, under strace making each rename take 10 ms more: in the middle of
    # a set's moves. Even kills: at a random moment of the run.
    moves = strace and k % 2 == 1
    if moves:
        cmd = [strace, "-f", "-qq", "-o", "/dev/null", "--seccomp-bpf", "-e", "trace=rename,renameat,renameat2",
               "-e", "inject=rename,renameat,renameat2:delay_exit=10000"] + cmd
    before = final_names()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    if moves:
        deadline = time.monotonic() + window + 2 * per_input
        while time.monotonic() < deadline and p.poll() is None and final_names() <= before:
            time.sleep(0.003)
        time.sleep(rng.uniform(0, 0.03))
    else:
        time.sleep(rng.uniform(0, window))
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()
    check(f"kill {k + 1}")
    damage()

subprocess.run(command(out) + ["--skip-existing"], check=True, stderr=subprocess.DEVNULL)
damaged.clear()
check("final run")
got = tree(out)
left = [p for p in got if STAGED in p or p.endswith(".tmp")]
if left:
    fail(f"temporary names left after the final run: {left[:5]}")
# The manifest: one whole line per input, the uninterrupted run's, and the line its set holds.
final_lines, cut = manifest_lines(f"{out}/manifest.jsonl")
if cut:
    fail(f"the final manifest ends in a cut line: {cut[:80]!r}")
if set(final_lines) != set(want_line):
    fail(f"the final manifest's inputs differ: extra {sorted(set(final_lines) - set(want_line))[:3]}, "
         f"missing {sorted(set(want_line) - set(final_lines))[:3]}")
for path, lines in final_lines.items():
    if len(lines) != 1 or lines[0] != want_line[path]:
        fail(f"the final manifest's lines for {path} are not the uninterrupted run's one line: {lines}")
for name in inputs:
    sub, song = name.split("/")
    held = figures(got[f"audio/{name}.manifest.json"])
    if held != final_lines[os.path.join(corpus, sub, song + ".mid")][0]:
        fail(f"{name}.manifest.json differs from its line in the manifest")
del got["manifest.jsonl"]
want_all = {rel.lstrip("/"): data for v in expected.values() for rel, data in v.items()}
if set(got) != set(want_all) or any(not same(rel, got[rel], want_all[rel]) for rel in got):
    extra = sorted(set(got) - set(want_all))[:5]
    missing = sorted(set(want_all) - set(got))[:5]
    differ = sorted(rel for rel in set(got) & set(want_all) if not same(rel, got[rel], want_all[rel]))[:5]
    fail(f"the resumed tree differs from the uninterrupted run's: extra {extra}, missing {missing}, differ {differ}")
print(f"{KILLS} kills (seed {SEED}), every input complete or without audio after each "
      f"(complete {counts['complete']}, without audio {counts['absent']}, left damaged {counts['damaged']} input-checks); "
      f"final tree equal to the uninterrupted run's ({len(got)} files), manifest one line per input equal to its "
      f"set's and the uninterrupted run's (render_seconds aside); {time.monotonic() - start:.0f} s")
shutil.rmtree(work)
