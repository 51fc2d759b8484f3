#!/usr/bin/env python3
"""carillon (the Python package) against the Python peers and the CLI batch,
side by side in one run: wall time, files/s and peak memory (issue 39).

  python-peers.py [--font SF2] [--carillon BIN] [--only NAME,NAME] [FILES...]   (default: the 31 openmsx songs)

Each contender runs in a process of its own (its peak RSS is that process's,
from wait4): carillon.Renderer reused, on 1 thread and on 2 threads (the GIL
released: two threads against one show it); pretty_midi's
`PrettyMIDI.fluidsynth()` (pyfluidsynth; mono, one synth per instrument);
symusic's `Synthesizer.render(score, stereo=True)` (0.5.8: the newest that
renders here, with numpy < 2); and `carillon render --jobs 2` (the CLI batch,
writing 32-bit float WAVs). Needs a venv with carillon (pip install ./python),
pretty_midi, pyfluidsynth and symusic==0.5.8. Fidelity is not measured here:
carillon's samples are the CLI's, byte for byte (python/tests), whose fidelity
is Benchmarks/fidelity.py's.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

CONTENDERS = ["carillon-1", "carillon-2", "pretty_midi", "symusic", "cli-jobs-2"]


def run_one(name, files, font):
    """In the child: render every file, print the seconds of audio made."""
    audio_seconds = 0.0
    if name.startswith("carillon-"):
        import carillon
        from concurrent.futures import ThreadPoolExecutor
        renderer = carillon.Renderer(font, sample_rate=44100)
        with ThreadPoolExecutor(int(name[-1])) as pool:
            for result in pool.map(renderer.render, files):
                audio_seconds += result.duration
    elif name == "pretty_midi":
        import pretty_midi
        for f in files:
            audio_seconds += len(pretty_midi.PrettyMIDI(f).fluidsynth(fs=44100, synthesizer=font)) / 44100
    elif name == "symusic":
        import symusic
        synth = symusic.Synthesizer(sf_path=font, sample_rate=44100)
        for f in files:
            audio = synth.render(symusic.Score(f), stereo=True)
            audio_seconds += audio.shape[-1] / 44100
    print(audio_seconds)


def measure(argv):
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    out = process.stdout.read().strip()
    return wall, usage.ru_maxrss / 1024, status, out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--font", default="/usr/share/sounds/sf2/FluidR3_GM.sf2")
    parser.add_argument("--carillon", default=".build/release/carillon")
    parser.add_argument("--only", default=",".join(CONTENDERS), help="contenders, comma-separated: " + ",".join(CONTENDERS))
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    files = args.files or sorted(glob.glob("/usr/share/games/openttd/baseset/openmsx/*.mid"))
    if args.one:
        return run_one(args.one, files, args.font)
    print(f"{len(files)} files, {os.path.basename(args.font)}, 44.1 kHz, {os.cpu_count()} cores")
    print(f"{'contender':<12} {'wall s':>8} {'files/s':>8} {'audio s':>9} {'peak MiB':>9}")
    for name in args.only.split(","):
        if name not in CONTENDERS:
            raise SystemExit(f"unknown contender {name} (use {', '.join(CONTENDERS)})")
        if name == "cli-jobs-2":
            with tempfile.TemporaryDirectory() as tmp:
                folder = os.path.join(tmp, "in")
                os.mkdir(folder)
                for f in files:
                    os.symlink(os.path.realpath(f), os.path.join(folder, os.path.basename(f)))
                wall, rss, status, _ = measure([args.carillon, "render", folder, "--output-dir", os.path.join(tmp, "out"),
                                                "--jobs", "2", "--bits", "32", "--soundfont", args.font, "-q"])
            audio = float("nan")
        else:
            wall, rss, status, out = measure([sys.executable, __file__, "--font", args.font, "--one", name, *files])
            audio = float(out.splitlines()[-1]) if status == 0 and out else float("nan")
        note = "" if status == 0 else f"  (failed: status {status})"
        print(f"{name:<12} {wall:8.1f} {len(files) / wall:8.2f} {audio:9.0f} {rss:9.1f}{note}", flush=True)


if __name__ == "__main__":
    main()
