"""Parse-throughput peers for Benchmarks/parse.sh: symusic (C++) and mido (pure Python).

Usage: parse_peers.py FILE RUNS
Prints `<name> <median seconds> <events seen> <bytes> <min seconds>` per parser,
timing the parse of bytes already in memory, as CarillonBench does.
"""
import io
import statistics
import sys
import time

import mido
import symusic

path, runs = sys.argv[1], int(sys.argv[2])
data = open(path, "rb").read()


def measure(name, parse, count, runs):
    times, result = [], None
    for _ in range(runs + 1):  # the first run warms up and is dropped
        start = time.perf_counter()
        result = parse()
        times.append(time.perf_counter() - start)
    times = times[1:]
    print(name, statistics.median(times), count(result), len(data), min(times), flush=True)


# symusic parses straight into notes (note-on/off paired), controls, tempos, ...
measure("symusic", lambda: symusic.Score.from_midi(data),
        lambda s: sum(len(t.notes) * 2 + len(t.controls) + len(t.pitch_bends) for t in s.tracks), runs)
# mido parses every message of every track into Python objects.
measure("mido", lambda: mido.MidiFile(file=io.BytesIO(data)),
        lambda m: sum(len(t) for t in m.tracks), max(1, runs // 5))
