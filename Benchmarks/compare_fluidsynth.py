#!/usr/bin/env python3
"""Helper of Benchmarks/compare-fluidsynth.sh: how alike two renders of one MIDI file are.

  compare_fluidsynth.py pair NAME CARILLON.wav FLUID.wav   # one tab-separated result line
  compare_fluidsynth.py header                             # the column names of that line
  compare_fluidsynth.py summary RESULTS.tsv                # table per file and the distribution
  compare_fluidsynth.py segments CARILLON.wav FLUID.wav [SECONDS]  # per window (default 10 s): where
                                                           # and how the two renders differ
  compare_fluidsynth.py flatten IN.mid OUT.mid             # one track, one tempo, every event at
                                                           # its exact time by mido (FLAT=1 in the script)
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


def segments(c_path, f_path, seconds=10.0):
    """Per window: envelope r from sample 0 and at the file's best lag, the waveform's
    own best lag (±6 ms, to the sample) and its correlation there, both levels.

    FluidSynth's player starts events on its 64-sample block boundaries, so its
    render runs 1-2 blocks behind a sample-accurate one, by an amount that changes
    from event to event: a window whose waveform r is ~1.000 at 64 or 128 samples
    is the same sound, only shifted; a low waveform r at every lag is a real
    difference (other notes, other voices, other effects state)."""
    c, rate = mono(c_path)
    f, _ = mono(f_path)
    frame = int(round(FRAME_S * rate))
    win = int(seconds * rate)
    span = int(0.006 * rate)
    print(f"{'start_s':>7} {'c_dBFS':>7} {'f_dBFS':>7} {'env_r0':>7} {'wave_lag':>8} {'wave_r':>7} {'env_r@lag':>9}")
    for s0 in range(0, min(len(c), len(f)) - frame, win):
        n = min(win, len(c) - s0, len(f) - s0 - span)
        if n < rate:   # last scrap under a second
            break
        a = c[s0:s0 + n]
        ea = float(a @ a)
        best = (-2.0, 0)
        if ea > 0:
            for lag in range(-min(span, s0), span + 1):
                b = f[s0 + lag:s0 + lag + n]
                eb = float(b @ b)
                if eb > 0:
                    r = float(a @ b) / math.sqrt(ea * eb)
                    if r > best[0]:
                        best = (r, lag)
        k = n // frame
        ca = np.sqrt((c[s0:s0 + k * frame].reshape(k, frame) ** 2).mean(axis=1))
        fa = np.sqrt((f[s0:s0 + k * frame].reshape(k, frame) ** 2).mean(axis=1))
        lag = best[1]
        fl = np.sqrt((f[s0 + lag:s0 + lag + k * frame].reshape(k, frame) ** 2).mean(axis=1))
        db = lambda x: 10 * math.log10(max(float((x * x).mean()), 1e-20))
        print(f"{s0 / rate:7.0f} {db(a):7.1f} {db(f[s0:s0 + n]):7.1f} {pearson(ca, fa):7.3f} "
              f"{lag:8d} {best[0]:7.3f} {pearson(ca, fl):9.3f}")


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
    # Not compared: a render empty (r_lag nan) or both below -60 dBFS in every
    # 10 ms frame (worst_s nan): a correlation of two silences means nothing.
    blank = [r[0] for r in rows if math.isnan(r[5]) or math.isnan(r[8])]
    rows = [r for r in rows if r[0] not in blank] + [r for r in rows if r[0] in blank]
    compared = [r for r in rows if r[0] not in blank]
    compared.sort(key=lambda r: r[5])
    rows = compared + [r for r in rows if r[0] in blank]
    width = max([len("file")] + [len(r[0]) for r in rows])
    print(f"{'file':<{width}} {'c_s':>7} {'f_s':>7} {'r0':>6} {'lag_ms':>6} {'r_lag':>6} {'resid_dB':>8} {'level_dB':>8} {'worst_s':>7} {'worst_dB':>8}")
    for r in rows:
        print(f"{r[0]:<{width}} {r[1]:7.1f} {r[2]:7.1f} {r[3]:6.3f} {r[4]:6.0f} {r[5]:6.3f} {r[6]:8.1f} {r[7]:8.2f} {r[8]:7.0f} {r[9]:8.1f}")
    print()
    print(f"files: {len(rows)}" + (f" ({len(blank)} not compared, a render empty or silent: {', '.join(blank)})" if blank else ""))
    for label, col in (("r0 (from sample 0)", 3), ("r_lag (best lag ±50 ms)", 5)):
        v = sorted(r[col] for r in compared if not math.isnan(r[col]))
        print(f"{label:<24} min {quantile(v, 0):.3f}  p5 {quantile(v, .05):.3f}  p25 {quantile(v, .25):.3f}  "
              f"median {quantile(v, .5):.3f}  <0.95: {sum(x < .95 for x in v)}  <0.90: {sum(x < .90 for x in v)}")
    v = sorted(r[6] for r in compared if not math.isnan(r[6]))
    print(f"{'resid_dB':<24} median {quantile(v, .5):.1f}  p75 {quantile(v, .75):.1f}  max {quantile(v, 1):.1f}")
    lags = [r[4] for r in compared]
    print(f"{'lag_ms':<24} median {quantile(sorted(lags), .5):.0f}  nonzero: {sum(abs(x) > 0.5 for x in lags)}")


def flatten(src, dst):
    """IN.mid with its tempo map applied: one track at 120 bpm, 960 PPQN (a tick is
    0.52 ms), every channel and SysEx message at its exact time by mido's reading,
    rounded once (no error accumulates); meta events dropped.

    FluidSynth 2.3's player drifts on files with many tempo changes (hundreds of
    ms over a few minutes on piano-midi.de files); rendered from this copy it
    plays each event where the tempo map puts it, so what remains against
    Carillon is the synthesis, not the reading of the tempo map."""
    import mido
    midi = mido.MidiFile(src, clip=True)
    out = mido.MidiFile(type=0, ticks_per_beat=960)
    track = mido.MidiTrack()
    out.tracks.append(track)
    track.append(mido.MetaMessage("set_tempo", tempo=500000, time=0))
    seconds, last = 0.0, 0
    for msg in midi:   # all tracks merged, times in seconds through the tempo map
        seconds += msg.time
        if msg.is_meta:
            continue
        tick = round(seconds * 1920)
        track.append(msg.copy(time=tick - last))
        last = tick
    out.save(dst)


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
    elif len(argv) in (4, 5) and argv[1] == "segments":
        segments(argv[2], argv[3], float(argv[4]) if len(argv) == 5 else 10.0)
    elif len(argv) == 4 and argv[1] == "flatten":
        flatten(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "select":
        select(int(argv[2]), float(argv[3]), sys.stdin.read().split("\n"))
    elif len(argv) == 3 and argv[1] == "summary":
        summary(argv[2])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
