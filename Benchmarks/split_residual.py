#!/usr/bin/env python3
"""Residual of a split render against the one-synth render, for
Benchmarks/split-residual.sh: RMS of the difference over RMS of the
reference, in dB, over the whole file and over its worst 1-second window
(windows where the reference is silent below -80 dBFS RMS are skipped).

    split_residual.py ONE.wav SPLIT.wav   ->  "overall_dB worst_second_dB worst_second_at_s"
"""
import sys

import numpy as np
import soundfile as sf


def residual_db(reference, other):
    signal = float(np.sum(reference.astype(np.float64) ** 2))
    residual = float(np.sum((reference.astype(np.float64) - other) ** 2))
    if signal == 0:
        return float("nan")
    if residual == 0:
        return float("-inf")
    return 10 * np.log10(residual / signal)


def main():
    one, rate = sf.read(sys.argv[1], dtype="float64", always_2d=True)
    split, rate2 = sf.read(sys.argv[2], dtype="float64", always_2d=True)
    assert rate == rate2
    n = min(len(one), len(split))
    one, split = one[:n], split[:n]
    overall = residual_db(one, split)
    worst, worst_at = float("-inf"), 0.0
    for start in range(0, n - rate + 1, rate // 2):   # 1-second windows, half a second apart
        a, b = one[start:start + rate], split[start:start + rate]
        if np.sqrt(np.mean(a ** 2)) < 1e-4:
            continue
        db = residual_db(a, b)
        if db > worst:
            worst, worst_at = db, start / rate
    print(f"{overall:.1f} {worst:.1f} {worst_at:.1f}")


if __name__ == "__main__":
    main()
