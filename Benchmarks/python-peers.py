#!/usr/bin/env python3
"""carillon (the Python package) against the Python peers and the CLI batch,
side by side in one run: wall time, files/s, peak memory and fidelity (issue 39).

  python-peers.py [--font SF2] [--carillon BIN] [--only NAME,NAME] [--no-fidelity | --no-timing]
                  [--chunk N] [--file-timeout S] [FOLDER|FILE...]

Each folder given is a set of MIDI files (searched below it) with a table of
its own; files given are one more set (default: the 31 openmsx songs). Each contender runs in a
process of its own (its peak RSS is that process's, from wait4):
carillon.Renderer reused, on 1 thread and on 2 threads (the GIL released:
two threads against one show it); pretty_midi's `PrettyMIDI.fluidsynth()`
(pyfluidsynth; mono, one synth per instrument); symusic's
`Synthesizer.render(score, stereo=True)` (0.5.8: the newest that renders
here, with numpy < 2); and `carillon render --jobs 2` (the CLI batch, writing
32-bit float WAVs).

The timed runs go chunk by chunk (--chunk files, 16 by default), each
contender in turn on each chunk, in a process of its own per chunk: load that
changes during a run weighs on every contender alike. Each contender's row is
the sum of its chunks (its peak memory their largest). A contender that spends more than --file-timeout seconds
(default 600) on one file is stopped and its row says on which file: one song
that hangs a peer does not hang the benchmark.

Fidelity is the render round's measure (Benchmarks/fidelity.py, `sound`):
env_r, the correlation of 10 ms RMS envelopes of the mono sums at the best
lag, against fluidsynth's render of the song's flattened copy (`flatten`:
FluidSynth's player cannot drift from the tempo map, and every event lands in
the block Carillon applies it in). It is measured after the timed runs, on
renders made again by each contender with nothing timed (the timed runs keep
no audio: holding it would be the peak memory); the CLI's are its timed
run's WAVs, and carillon on 2 threads gives carillon on 1 thread's samples
(python/tests), so it shares that column. Per set: the median env_r, the
lowest, and how many songs fall below 0.95.

Needs a venv with carillon (pip install ./python), pretty_midi, pyfluidsynth,
symusic==0.5.8, and for fidelity mido, scipy and soundfile, and fluidsynth on
the PATH (python-peers.sh makes it).
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CONTENDERS = ["carillon-1", "carillon-2", "pretty_midi", "symusic", "cli-jobs-2"]
RATE = 44100
OPENMSX = "/usr/share/games/openttd/baseset/openmsx"


def renders(name, files, font):
    """In the child: (file index, float32 audio (frames, channels) or mono) for every file."""
    if name.startswith("carillon-"):
        import carillon
        from concurrent.futures import ThreadPoolExecutor
        renderer = carillon.Renderer(font, sample_rate=RATE)
        with ThreadPoolExecutor(int(name[-1])) as pool:
            for i, result in enumerate(pool.map(renderer.render, files)):
                yield i, result.audio
    elif name == "pretty_midi":
        import pretty_midi
        for i, f in enumerate(files):
            yield i, pretty_midi.PrettyMIDI(f).fluidsynth(fs=RATE, synthesizer=font)
    elif name == "symusic":
        import symusic
        synth = symusic.Synthesizer(sf_path=font, sample_rate=RATE)
        for i, f in enumerate(files):
            yield i, synth.render(symusic.Score(f), stereo=True).T


def run_one(name, files, font, save):
    """In the child: render every file; print the seconds of audio made. With `save`, each
    render is written there as NNNN.wav (the fidelity pass: nothing timed)."""
    audio_seconds = 0.0
    for i, audio in renders(name, files, font):
        audio_seconds += len(audio) / RATE
        if save:
            import soundfile
            soundfile.write(os.path.join(save, f"{i:04d}.wav"), audio, RATE, subtype="FLOAT")
        print(f"done {i}", flush=True)   # progress, for the parent's watchdog
    print(audio_seconds, flush=True)


def measure(argv, files=None, file_timeout=None):
    """Run argv to its end: (wall s, peak RSS MiB, status, its last output line, what stopped it or
    ""). With file_timeout, the child prints a line per file done; one file taking longer stops it."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    progress = {"last": start, "done": -1, "line": ""}

    def read():
        for line in process.stdout:
            progress["last"] = time.perf_counter()
            line = line.strip()
            if line.startswith("done "):
                progress["done"] = max(progress["done"], int(line[5:]))
            elif line:
                progress["line"] = line
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    stopped = ""
    while True:   # wait4, not poll: the child's rusage is its peak memory
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.2)
        if not stopped and file_timeout and time.perf_counter() - progress["last"] > file_timeout:
            process.kill()
            stuck = files[progress["done"] + 1] if files and progress["done"] + 1 < len(files) else "?"
            stopped = f"stopped: over {file_timeout:g} s on {stuck} ({progress['done'] + 1} files done)"
    process.returncode = status
    wall = time.perf_counter() - start
    reader.join(timeout=5)
    return wall, usage.ru_maxrss / 1024, status, progress["line"], stopped


def timed_row(name, wall, rss, status, audio, count, stopped, fidelity=""):
    note = f"  ({stopped})" if stopped else "" if status == 0 else f"  (failed: status {status})"
    return f"{name:<12} {wall:8.1f} {count / wall:8.2f} {audio:9.0f} {rss:9.1f}{fidelity}{note}"


def midi_files(where):
    if os.path.isdir(where):
        found = [p for p in glob.glob(os.path.join(where, "**", "*"), recursive=True)
                 if p.lower().endswith((".mid", ".midi")) and os.path.isfile(p)]
        return sorted(found)
    return [where]


def references(files, font, folder):
    """fluidsynth's render of each song's flattened copy (fidelity.py's reference): folder/NNNN.wav."""
    sys.path.insert(0, HERE)
    import fidelity
    for i, f in enumerate(files):
        flat = os.path.join(folder, f"{i:04d}.mid")
        try:
            fidelity.flatten(f, flat)
        except Exception as e:   # mido cannot read it: no reference, no fidelity for this song
            print(f"  no reference for {f}: {e}", file=sys.stderr)
            continue
        subprocess.run(["fluidsynth", "-ni", "-F", os.path.join(folder, f"{i:04d}.wav"), "-r", str(RATE), font, flat],
                       capture_output=True, check=False)


def fidelity_of(rendered, reference, count):
    """env_r of each song rendered (folder/NNNN.wav) against its reference: the list of those measured."""
    sys.path.insert(0, HERE)
    import fidelity
    values = []
    for i in range(count):
        got, ref = os.path.join(rendered, f"{i:04d}.wav"), os.path.join(reference, f"{i:04d}.wav")
        if os.path.exists(got) and os.path.exists(ref):
            r = fidelity.sound(got, ref).get("env_r")
            if r == r:   # not NaN
                values.append(r)
    return values


def describe(values, count):
    if not values:
        return "-"
    low = sum(v < 0.95 for v in values)
    return f"{statistics.median(values):.4f} (min {min(values):.3f}, {low} < 0.95, {len(values)}/{count})"


def one_set(where, files, args):
    print(f"\n{where}: {len(files)} files, {os.path.basename(args.font)}, {RATE / 1000:g} kHz, {os.cpu_count()} cores", flush=True)
    print(f"{'contender':<12} {'wall s':>8} {'files/s':>8} {'audio s':>9} {'peak MiB':>9}  fidelity env_r: median (min, below 0.95, measured)")
    names = args.only.split(",")
    for name in names:
        if name not in CONTENDERS:
            raise SystemExit(f"unknown contender {name} (use {', '.join(CONTENDERS)})")
    with tempfile.TemporaryDirectory(dir=args.scratch) as tmp:
        cli_in = os.path.join(tmp, "in")
        os.mkdir(cli_in)
        for i, f in enumerate(files):   # numbered: the CLI's outputs line up with the references
            os.symlink(os.path.realpath(f), os.path.join(cli_in, f"{i:04d}.mid"))

        def cli(chunk, out):
            folder = os.path.join(tmp, f"in-{chunk[0]}")
            os.mkdir(folder)
            for i in chunk:
                os.symlink(os.path.join(cli_in, f"{i:04d}.mid"), os.path.join(folder, f"{i:04d}.mid"))
            return [args.carillon, "render", folder, "--output-dir", out,
                    "--jobs", "2", "--bits", "32", "--soundfont", args.font, "-r", str(RATE), "-q"]

        rows = {}
        if args.timing:
            # Chunk by chunk, each contender in turn: a machine whose load changes during the run
            # weighs on every contender alike (one chunk: each contender's whole run in one go).
            size = args.chunk or len(files)
            chunks = [list(range(i, min(i + size, len(files)))) for i in range(0, len(files), size)]
            total = {name: [0.0, 0.0, 0, 0.0, ""] for name in names}   # wall, peak RSS, status, audio, stopped
            for chunk in chunks:
                for name in names:
                    row = total[name]
                    if row[2] or row[4]:
                        continue   # failed or stopped in an earlier chunk
                    if name == "cli-jobs-2":
                        wall, rss, status, _, stopped = measure(cli(chunk, os.path.join(tmp, "cli")))
                        audio = float("nan")
                    else:
                        part = [files[i] for i in chunk]
                        wall, rss, status, out, stopped = measure([sys.executable, __file__, "--font", args.font, "--one", name, *part],
                                                                  part, args.file_timeout)
                        audio = float(out) if status == 0 and out else float("nan")
                    row[0] += wall
                    row[1] = max(row[1], rss)
                    row[2], row[4] = status, stopped
                    row[3] += audio
            for name in names:
                wall, rss, status, audio, stopped = total[name]
                rows[name] = (wall, rss, status, audio, stopped)
                print(timed_row(name, wall, rss, status, audio, len(files), stopped), flush=True)
            print(f"  [{len(chunks)} chunk(s) of {size} files, each contender in turn; ended {time.strftime('%H:%M:%S')},"
                  f" load {os.getloadavg()[0]:.1f}]", flush=True)
        if not args.fidelity:
            return
        print(f"fidelity (renders made again, untimed; references: fluidsynth -F of each flattened song)", flush=True)
        # Fidelity: the references, then each contender's renders again, untimed.
        reference = os.path.join(tmp, "reference")
        os.mkdir(reference)
        references(files, args.font, reference)
        measured = {}
        for name in names:
            if name == "cli-jobs-2":
                if not args.timing:   # no timed run's WAVs to measure: render them now
                    subprocess.run(cli(list(range(len(files))), os.path.join(tmp, "cli")), check=False)
                measured[name] = fidelity_of(os.path.join(tmp, "cli"), reference, len(files))
                continue
            if name == "carillon-2" and "carillon-1" in names:
                continue   # the same samples as carillon-1
            save = os.path.join(tmp, name)
            os.mkdir(save)
            subprocess.run([sys.executable, __file__, "--font", args.font, "--one", name, "--save", save, *files],
                           stdout=subprocess.DEVNULL, check=False)
            measured[name] = fidelity_of(save, reference, len(files))
            subprocess.run(["rm", "-rf", save], check=False)
        if "carillon-2" in names and "carillon-2" not in measured:
            measured["carillon-2"] = measured.get("carillon-1", [])
        for name in names:
            if name in rows:
                wall, rss, status, audio, stopped = rows[name]
                print(timed_row(name, wall, rss, status, audio, len(files), stopped, "  " + describe(measured[name], len(files))),
                      flush=True)
            else:
                print(f"{name:<12} {'-':>8} {'-':>8} {'-':>9} {'-':>9}  {describe(measured[name], len(files))}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--font", default="/usr/share/sounds/sf2/FluidR3_GM.sf2")
    parser.add_argument("--carillon", default=".build/release/carillon")
    parser.add_argument("--only", default=",".join(CONTENDERS), help="contenders, comma-separated: " + ",".join(CONTENDERS))
    parser.add_argument("--no-fidelity", dest="fidelity", action="store_false", help="timing and memory only")
    parser.add_argument("--no-timing", dest="timing", action="store_false", help="fidelity only (untimed renders)")
    parser.add_argument("--chunk", type=int, default=16, help="files per chunk: each contender runs a chunk in turn (0: all at once)")
    parser.add_argument("--file-timeout", type=float, default=600, help="stop a contender that spends this long on one file")
    parser.add_argument("--scratch", default=None, help="where renders are kept while measured (default: the system's temp)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--save", help=argparse.SUPPRESS)
    parser.add_argument("sets", nargs="*")
    args = parser.parse_args()
    if args.one:
        return run_one(args.one, args.sets, args.font, args.save)
    given = args.sets or [OPENMSX]
    sets = [(d, midi_files(d)) for d in given if os.path.isdir(d)]
    loose = [f for f in given if not os.path.isdir(f)]
    if loose:
        sets.append((f"{len(loose)} files given", loose))
    for where, files in sets:
        if not files:
            raise SystemExit(f"{where}: no MIDI files")
        one_set(where, files, args)


if __name__ == "__main__":
    main()
