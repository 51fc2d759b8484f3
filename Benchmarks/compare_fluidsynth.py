#!/usr/bin/env python3
"""Helper of Benchmarks/compare-fluidsynth.sh: how alike two renders of one MIDI file are.

  compare_fluidsynth.py pair NAME CARILLON.wav FLUID.wav   # one tab-separated result line
  compare_fluidsynth.py header                             # the column names of that line
  compare_fluidsynth.py summary RESULTS.tsv                # table per file and the distribution
  compare_fluidsynth.py select N MAX_SECONDS < PATHS       # N of the paths, evenly spaced in the
                                                           # sorted list, of those at most MAX_SECONDS
                                                           # long by mido (0: every path / no limit)

Measures (both files mono-summed, 44.1 kHz expected, 10 ms RMS frames):
  r0        Pearson correlation of the two 10 ms RMS envelopes, both taken from
            sample 0, over the common length (the shorter file);
  lag_ms    the shift of fluidsynth's render against Carillon's, within ±50 ms in
            1 ms steps, that gives the highest envelope correlation (positive:
            fluidsynth's sound comes later);
  r_lag     the envelope correlation at that lag;
  resid_db  residual of the waveforms at that lag (refined to the sample within
            ±1 ms, the shift that minimises it): 20·log10(RMS(c - f) / RMS(f))
            over the overlap; 0 dB is "as different as silence", -inf identical;
  level_db  20·log10(RMS(c) / RMS(f)) over the overlap;
  c_s, f_s  lengths in seconds;
  worst_s   start of the 5 s window (in Carillon's time) where the envelopes
            differ most (mean |dB| difference of frames above -60 dBFS), and
  worst_db  that mean difference: where to listen first.
"""
import math
import sys

import numpy as np
import soundfile as sf

FRAME_S = 0.010
MAX_LAG_S = 0.050
LAG_STEP_S = 0.001
REFINE_S = 0.001
WINDOW_S = 5.0

COLUMNS = ["file", "c_s", "f_s", "r0", "lag_ms", "r_lag", "resid_db", "level_db", "worst_s", "worst_db"]


def mono(path):
    data, rate = sf.read(path, dtype="float32", always_2d=True)
    return data.sum(axis=1, dtype=np.float64), rate


def envelope(cum, start, frame, count):
    """RMS of `count` frames of `frame` samples from sample `start`, from the cumulative sum of squares."""
    idx = start + frame * np.arange(count + 1)
    energy = np.diff(cum[idx])
    return np.sqrt(np.maximum(energy, 0.0) / frame)


def pearson(a, b):
    a = a - a.mean()
    b = b - b.mean()
    den = math.sqrt(float(a @ a) * float(b @ b))
    return float(a @ b) / den if den > 0 else float("nan")


def pair(name, c_path, f_path):
    c, rate = mono(c_path)
    f, f_rate = mono(f_path)
    if f_rate != rate:
        raise SystemExit(f"{name}: sample rates differ ({rate} against {f_rate})")
    frame = int(round(FRAME_S * rate))
    cc = np.concatenate(([0.0], np.cumsum(c * c)))
    cf = np.concatenate(([0.0], np.cumsum(f * f)))

    n0 = min(len(c), len(f)) // frame
    r0 = pearson(envelope(cc, 0, frame, n0), envelope(cf, 0, frame, n0)) if n0 > 1 else float("nan")

    # Envelope correlation for every lag in ±50 ms, 1 ms steps: compare
    # carillon[t] with fluidsynth[t + lag] over the overlap, frames of 10 ms.
    max_lag = int(round(MAX_LAG_S * rate))
    step = int(round(LAG_STEP_S * rate))
    best = (-2.0, 0)   # (r, lag); stays when a file is empty or all silent
    for k in range(-(max_lag // step), max_lag // step + 1):
        lag = k * step
        c0, f0 = max(0, -lag), max(0, lag)
        n = min(len(c) - c0, len(f) - f0) // frame
        if n < 2:
            continue
        r = pearson(envelope(cc, c0, frame, n), envelope(cf, f0, frame, n))
        if not math.isnan(r) and r > best[0]:
            best = (r, lag)
    r_lag, lag = best
    if r_lag < -1.5:   # nothing to compare: report nan, not a made-up lag
        values = [name, len(c) / rate, len(f) / rate, r0] + [float("nan")] * 6
        print("\t".join(v if isinstance(v, str) else f"{v:.4f}" for v in values))
        return

    # Residual: the sample shift within ±1 ms of the envelope lag that minimises it.
    refine = int(round(REFINE_S * rate))
    resid = (float("inf"), lag)
    for l in range(lag - refine, lag + refine + 1):
        c0, f0 = max(0, -l), max(0, l)
        n = min(len(c) - c0, len(f) - f0)
        if n <= 0:
            continue
        a, b = c[c0:c0 + n], f[f0:f0 + n]
        ef = float(b @ b)
        ed = float(a @ a) - 2.0 * float(a @ b) + ef
        ratio = ed / ef if ef > 0 else float("inf")
        if ratio < resid[0]:
            resid = (ratio, l)
    ratio, l = resid
    resid_db = 10 * math.log10(max(ratio, 1e-30)) if math.isfinite(ratio) else float("nan")
    c0, f0 = max(0, -l), max(0, l)
    n = min(len(c) - c0, len(f) - f0)
    ec, ef = float(c[c0:c0 + n] @ c[c0:c0 + n]), float(f[f0:f0 + n] @ f[f0:f0 + n])
    level_db = 10 * math.log10(ec / ef) if ec > 0 and ef > 0 else float("nan")

    # Where the envelopes differ most: 5 s windows at the best lag.
    c0, f0 = max(0, -lag), max(0, lag)
    n = min(len(c) - c0, len(f) - f0) // frame
    worst_s, worst_db = float("nan"), float("nan")
    if n > 0:
        ec_env = envelope(cc, c0, frame, n)
        ef_env = envelope(cf, f0, frame, n)
        floor = 10 ** (-60 / 20)
        loud = (ec_env > floor) | (ef_env > floor)
        diff = np.abs(20 * np.log10(np.maximum(ec_env, floor) / np.maximum(ef_env, floor))) * loud
        per = int(WINDOW_S / FRAME_S)
        best_w = -1.0
        for w in range(0, n, per):
            m = loud[w:w + per]
            if m.sum() < per // 10:
                continue
            v = float(diff[w:w + per][m].mean())
            if v > best_w:
                best_w, worst_s = v, (c0 + w * frame) / rate
        worst_db = best_w if best_w >= 0 else float("nan")

    values = [name, len(c) / rate, len(f) / rate, r0, 1000.0 * lag / rate, r_lag, resid_db, level_db, worst_s, worst_db]
    print("\t".join(v if isinstance(v, str) else f"{v:.4f}" for v in values))


def quantile(sorted_values, q):
    if not sorted_values:
        return float("nan")
    pos = q * (len(sorted_values) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summary(path):
    rows = []
    with open(path) as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if not parts or parts[0] == "file" or len(parts) != len(COLUMNS):
                continue
            rows.append([parts[0]] + [float(p) for p in parts[1:]])
    rows.sort(key=lambda r: (r[5] if not math.isnan(r[5]) else -9))
    blank = [r[0] for r in rows if math.isnan(r[5])]
    width = max([len("file")] + [len(r[0]) for r in rows])
    print(f"{'file':<{width}} {'c_s':>7} {'f_s':>7} {'r0':>6} {'lag_ms':>6} {'r_lag':>6} {'resid_dB':>8} {'level_dB':>8} {'worst_s':>7} {'worst_dB':>8}")
    for r in rows:
        print(f"{r[0]:<{width}} {r[1]:7.1f} {r[2]:7.1f} {r[3]:6.3f} {r[4]:6.0f} {r[5]:6.3f} {r[6]:8.1f} {r[7]:8.2f} {r[8]:7.0f} {r[9]:8.1f}")
    print()
    print(f"files: {len(rows)}" + (f" ({len(blank)} not compared, a render empty or silent: {', '.join(blank)})" if blank else ""))
    for label, col in (("r0 (from sample 0)", 3), ("r_lag (best lag ±50 ms)", 5)):
        v = sorted(r[col] for r in rows if not math.isnan(r[col]))
        print(f"{label:<24} min {quantile(v, 0):.3f}  p5 {quantile(v, .05):.3f}  p25 {quantile(v, .25):.3f}  "
              f"median {quantile(v, .5):.3f}  <0.95: {sum(x < .95 for x in v)}  <0.90: {sum(x < .90 for x in v)}")
    v = sorted(r[6] for r in rows if not math.isnan(r[6]))
    print(f"{'resid_dB':<24} median {quantile(v, .5):.1f}  p75 {quantile(v, .75):.1f}  max {quantile(v, 1):.1f}")
    lags = [r[4] for r in rows]
    print(f"{'lag_ms':<24} median {quantile(sorted(lags), .5):.0f}  nonzero: {sum(abs(x) > 0.5 for x in lags)}")


def select(count, max_seconds, paths):
    import mido
    paths = sorted(p for p in paths if p)
    if max_seconds > 0:
        kept = []
        for p in paths:
            try:
                length = mido.MidiFile(p, clip=True).length
            except Exception:   # a file mido cannot read: keep it, the renderers may
                length = 0.0
            if length <= max_seconds:
                kept.append(p)
        paths = kept
    if 0 < count < len(paths):
        step = len(paths) / count
        paths = [paths[int(i * step)] for i in range(count)]
    print("\n".join(paths))


def main(argv):
    if len(argv) >= 2 and argv[1] == "header":
        print("\t".join(COLUMNS))
    elif len(argv) == 5 and argv[1] == "pair":
        pair(argv[2], argv[3], argv[4])
    elif len(argv) == 4 and argv[1] == "select":
        select(int(argv[2]), float(argv[3]), sys.stdin.read().split("\n"))
    elif len(argv) == 3 and argv[1] == "summary":
        summary(argv[2])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
