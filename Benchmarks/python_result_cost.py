#!/usr/bin/env python3
"""Where a Python render's time goes besides the render itself (issue 39: the
`Renderer` behind the CLI batch): each openmsx file rendered once through the
C ABI, timed in parts on one thread — the render call (MIDI bytes in, the
result's samples in the library's memory), then what the Python side did with
them before (a copy into a new numpy array, as `carillon_result_copy_samples`
still offers) against what it does now (an array made on the library's memory,
no copy). Run with the package installed (pip install ./python):

  python Benchmarks/python_result_cost.py [--font SF2] [FILE|FOLDER ...]
"""
import argparse
import glob
import os
import time

import numpy as np

import carillon
from carillon import _native

RATE = 44100


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--font", default="/usr/share/sounds/sf2/TimGM6mb.sf2")
    parser.add_argument("inputs", nargs="*", default=["/usr/share/games/openttd/baseset/openmsx"])
    args = parser.parse_args()
    files = []
    for where in args.inputs:
        files += sorted(glob.glob(os.path.join(where, "*.mid"))) if os.path.isdir(where) else [where]
    renderer = carillon.Renderer(args.font, sample_rate=RATE)
    lib = _native.lib
    render_s = copy_s = wrap_s = audio_s = 0.0
    for path in files:
        data, name, key = carillon.midi_bytes(path)
        kind, message = carillon._ctypes.c_int32(0), carillon._ctypes.c_void_p(None)
        t0 = time.perf_counter()
        result = lib.carillon_render(renderer._handle, data, len(data), name.encode(), key.encode(),
                                     carillon._ctypes.byref(kind), carillon._ctypes.byref(message))
        t1 = time.perf_counter()
        assert result, f"{path}: render failed"
        frames = lib.carillon_result_frames(result)
        # Before: a new array, the samples copied into it.
        copied = np.empty((frames, 2), dtype=np.float32)
        lib.carillon_result_copy_samples(result, copied.ctypes.data, frames)
        t2 = time.perf_counter()
        # Now: an array on the result's own samples.
        wrapped = np.asarray(carillon._ResultSamples(result, frames))
        t3 = time.perf_counter()
        assert np.array_equal(copied, wrapped)
        del copied, wrapped   # frees the result
        render_s += t1 - t0
        copy_s += t2 - t1
        wrap_s += t3 - t2
        audio_s += frames / RATE
    print(f"{len(files)} files, {audio_s:.0f} s of audio, {os.path.basename(args.font)}, 1 thread, load {os.getloadavg()[0]:.1f}")
    print(f"render call   {render_s:8.2f} s")
    print(f"copy (before) {copy_s:8.3f} s  {100 * copy_s / render_s:5.2f} % of the render call")
    print(f"wrap (now)    {wrap_s:8.4f} s  {100 * wrap_s / render_s:5.3f} %")


if __name__ == "__main__":
    main()
