#!/usr/bin/env python3
"""Fidelity of `carillon render` on real songs, timing apart from sound (issue 30).

  fidelity.py check [--manifest M] [--corpus DIR]   # every file of the manifest there, sha256 equal
  fidelity.py run [--manifest M] [--corpus DIR] [--carillon BIN] [--font SF2] [--jobs N] [--out DIR] [--only NAME...]
  fidelity.py summary [--out DIR]                    # the table and the figures of a run (run ends with it)
  fidelity.py flatten IN.mid OUT.mid                 # the copy fluidsynth renders (below)
  fidelity.py select N MAX_SECONDS < PATHS           # N of the paths, evenly spaced, at most MAX_SECONDS
                                                     # long by mido (0: all / no limit); render-corpus.sh

For each song of the manifest (Benchmarks/fidelity-corpus.txt: name, source,
sha256; the files under --corpus, default /work/corpus30/songs, not in git):

Timing. `carillon render SONG --labels` against pretty_midi: each label row is
matched to pretty_midi's note of the same track, channel and key, nearest
onset (as Tests/Labels/run.sh does); onset error max and median in ms, offset
error median, and how many offsets differ by more than half a block (where
FluidSynth's note-ending rules and pretty_midi's pairing differ, which
Tests/Labels/pretty_midi_labels.py explains one by one). Carillon moves every
event to the nearest 64-frame block, so the bound is 0.74 ms at 44.1 kHz.
The onsets are also matched against mido's times, which take every track's
set-tempo events (pretty_midi takes track 0's only): a song whose onsets
differ from pretty_midi's gets that as its cause when mido's agree.

Sound, with the timing taken out. fluidsynth renders a flattened copy of the
song (`flatten`): one track, 500 ticks a quarter at 120 bpm, so a tick is a
millisecond and FluidSynth's player cannot drift, and each event at the
millisecond that makes the player send it in the block where Carillon
applies it (the block nearest the event's time by mido), and the song's End of
Track kept. The player sends them one block later than Carillon, every one
alike: lag_blk 1. Both renders are at
the programs' defaults, which match (gain 0.2, reverb and chorus on, polyphony
256, 44.1 kHz), Carillon with one synth (`--threads 1`). On the mono sums:
  env_r     Pearson correlation of the 10 ms RMS envelopes over the common length,
            at the lag (whole blocks, ±4) that gives the highest value (lag_blk;
            1 when the alignment holds);
  worst_r   the lowest envelope correlation of a 1 s window (windows where both
            renders are above -50 dBFS and the envelope moves, CV > 0.1), at worst_s;
  resid_db  waveform residual at that lag, 20·log10(RMS(c - f) / RMS(f));
            -inf: the same samples; 0 dB: as different as silence;
  spec_r    Pearson correlation of the two log spectrograms in 1/3-octave
            bands (46 ms frames, frames above -60 dBFS);
  level_db  20·log10(RMS(c) / RMS(f)).

Each song below 0.95 (env_r) gets a cause found by the script, not written by
hand: a render missing or silent; Carillon's timing off pretty_midi's; else
both renders are made again with one thing changed at a time (reverb and
chorus off; sustain pedal taken out; SysEx taken out; the drum channel's
program changes taken out) and the first change that lifts env_r to 0.95 or
more is named, with the figure; then voice stealing (Carillon has no polyphony
option, so fluidsynth's render at 1024 voices against its own at 256: below
0.99, voices are stolen in that song). A song nothing explains is listed as
unexplained, with what its worst second holds.

Outputs under --out (default bench-out/fidelity): rows/NAME.json per song,
results.tsv, summary.txt; renders are removed unless --keep. Needs numpy,
scipy, soundfile, mido and pretty_midi (a venv: see Benchmarks/README.md).
"""
import argparse
import concurrent.futures
import csv
import hashlib
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import time
import warnings

warnings.filterwarnings("ignore")   # pretty_midi warns about tempo events off track 0

HERE = pathlib.Path(__file__).resolve().parent
RATE = 44100
BLOCK = 64                            # FluidSynth's block; Carillon's event grid
BOUND_MS = (BLOCK / 2 + 0.5) / RATE * 1000   # half a block, plus the rounding to a frame
THRESHOLD = 0.95
FRAME_S = 0.010
WINDOW_S = 1.0
MAX_LAG_BLOCKS = 4
POLYPHONY = 256                       # both programs' default
FLUID_PPQ, FLUID_TEMPO = 500, 500000  # a tick is a millisecond

COLUMNS = ["name", "notes", "on_max_ms", "on_med_ms", "off_med_ms", "off_moved", "unmatched",
           "c_s", "f_s", "lag_blk", "env_r", "worst_r", "worst_s", "resid_db", "spec_r", "level_db", "cause"]


# --- the corpus ---------------------------------------------------------------

def read_manifest(path):
    """Rows of the manifest: name, source (repository or package), revision, path there, sha256."""
    rows = []
    for line in open(path):
        if not line.strip() or line.startswith("#"):
            continue
        name, source, revision, where, sha = line.rstrip("\n").split("\t")
        rows.append(dict(name=name, source=source, revision=revision, path=where, sha256=sha))
    return rows


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check(manifest, corpus):
    rows = read_manifest(manifest)
    bad = 0
    for r in rows:
        p = corpus / r["name"]
        if not p.is_file():
            bad += 1
            print(f"missing: {r['name']} (from {r['source']} {r['revision']} {r['path']})")
        elif sha256(p) != r["sha256"]:
            bad += 1
            print(f"different: {r['name']} (sha256 {sha256(p)}, the manifest says {r['sha256']})")
    print(f"{len(rows) - bad} of {len(rows)} files of {manifest} in {corpus} as listed")
    return bad == 0


# --- MIDI: the flattened copy, the ablations, what a song holds ---------------

def block_of(seconds):
    """The block Carillon applies an event at `seconds` in: frame round(t·rate), to the nearest block."""
    return (round(seconds * RATE) + BLOCK // 2) // BLOCK


def fluid_tick(block):
    """The millisecond tick FluidSynth's player sends in `block` (its timer gives the player
    msec = floor(1000 · frame / rate) at the block's first frame, and the player sends
    every event whose tick is at most that; a block is 1.45 ms, so each block has its own)."""
    return (block * BLOCK * 1000) // RATE


def flatten(src, dst, drop=()):
    """SRC as one track that fluidsynth plays with Carillon's timing: every channel and
    SysEx message at the tick of the block Carillon applies it in (by mido's reading of
    the tempo map), meta events dropped. `drop`: message kinds to leave out."""
    import mido
    midi = mido.MidiFile(src, clip=True)
    out = mido.MidiFile(type=0, ticks_per_beat=FLUID_PPQ)
    track = mido.MidiTrack()
    out.tracks.append(track)
    track.append(mido.MetaMessage("set_tempo", tempo=FLUID_TEMPO, time=0))
    seconds, last = 0.0, 0
    for msg in midi:   # all tracks merged, times in seconds through the tempo map
        seconds += msg.time
        if msg.is_meta or dropped(msg, drop):
            continue
        tick = fluid_tick(block_of(seconds))
        track.append(msg.copy(time=tick - last))
        last = tick
    # The song ends where its last End of Track is, not at its last event: FluidSynth's
    # player ends there, and its end stops the notes still sounding (pedal held).
    end = fluid_tick(block_of(seconds))
    track.append(mido.MetaMessage("end_of_track", time=max(0, end - last)))
    out.save(dst)


def dropped(msg, drop):
    return (("pedal" in drop and msg.type == "control_change" and msg.control in (64, 66, 67))
            or ("sysex" in drop and msg.type == "sysex")
            or ("drumprog" in drop and msg.type == "program_change" and msg.channel == 9))


def strip(src, dst, drop):
    """SRC with the `drop` kinds taken out, tracks and ticks kept (Carillon's copy in an ablation)."""
    import mido
    midi = mido.MidiFile(src, clip=True)
    for track in midi.tracks:
        carry, kept = 0, []
        for msg in track:
            if not msg.is_meta and dropped(msg, drop):
                carry += msg.time
                continue
            kept.append(msg.copy(time=msg.time + carry))
            carry = 0
        track[:] = kept
    midi.save(dst)


def features(src):
    """What a song holds that a cause can be: counts by mido, and the busiest moment's
    sounding notes (sustain pedal counted) against the polyphony."""
    import mido
    midi = mido.MidiFile(src, clip=True)
    f = dict(type=midi.type, ppq=midi.ticks_per_beat, tracks=len(midi.tracks), tempos=0, sysex=0,
             gs_xg_reset=0, pedal=0, drum_programs=0, notes=0, peak_notes=0, length_s=0.0)
    sounding, pedal, held = set(), [False] * 16, [set() for _ in range(16)]
    t = 0.0
    for msg in midi:
        t += msg.time
        if msg.type == "set_tempo":
            f["tempos"] += 1
        elif msg.type == "sysex":
            f["sysex"] += 1
            d = bytes(msg.data)
            if d[:4] == bytes([0x41, 0x10, 0x42, 0x12]) or d[:3] == bytes([0x43, 0x10, 0x4C]):
                f["gs_xg_reset"] += 1
        elif msg.type == "control_change" and msg.control == 64:
            f["pedal"] += 1
            pedal[msg.channel] = msg.value >= 64
            if not pedal[msg.channel]:
                for k in held[msg.channel]:
                    sounding.discard((msg.channel, k))
                held[msg.channel].clear()
        elif msg.type == "program_change" and msg.channel == 9:
            f["drum_programs"] += 1
        elif msg.type == "note_on" and msg.velocity > 0:
            f["notes"] += 1
            sounding.add((msg.channel, msg.note))
            f["peak_notes"] = max(f["peak_notes"], len(sounding))
        elif msg.type in ("note_on", "note_off"):
            if pedal[msg.channel]:
                held[msg.channel].add(msg.note)
            else:
                sounding.discard((msg.channel, msg.note))
    f["length_s"] = round(t, 1)
    return f


def events_near(src, start, seconds=WINDOW_S):
    """Counts of the kinds of messages in [start, start + seconds) by mido's times."""
    import mido
    counts, t = {}, 0.0
    for msg in mido.MidiFile(src, clip=True):
        t += msg.time
        if start <= t < start + seconds:
            kind = "note_on" if msg.type == "note_on" and msg.velocity > 0 else msg.type
            if msg.type == "control_change":
                kind = f"cc{msg.control}"
            counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1])[:6])


# --- timing: labels against pretty_midi (and mido) ----------------------------

def mido_onsets(src):
    """(track, channel 1-16, key) -> [onset seconds], with the tempo map of every track
    (as mido, FluidSynth and Carillon read it; pretty_midi reads track 0's only)."""
    import mido
    midi = mido.MidiFile(str(src), clip=True)
    tempos, notes = [], {}
    for i, track in enumerate(midi.tracks):
        tick = 0
        for msg in track:
            tick += msg.time
            if msg.type == "set_tempo":
                tempos.append((tick, msg.tempo))
            elif msg.type == "note_on" and msg.velocity > 0:
                notes.setdefault((i, msg.channel + 1, msg.note), []).append(tick)
    tempos.sort(key=lambda t: t[0])
    marks, tick0, sec0, tempo = [], 0, 0.0, 500000   # (tick, seconds, tempo from there)
    for tick, t in tempos:
        sec0 += (tick - tick0) * tempo / 1e6 / midi.ticks_per_beat
        tick0, tempo = tick, t
        marks.append((tick0, sec0, tempo))
    import bisect
    starts = [m[0] for m in marks]

    def seconds(tick):
        k = bisect.bisect_right(starts, tick) - 1
        t0, s0, tp = marks[k] if k >= 0 else (0, 0.0, 500000)
        return s0 + (tick - t0) * tp / 1e6 / midi.ticks_per_beat
    return {k: [(seconds(t), None) for t in v] for k, v in notes.items()}, sum(
        1 for i, tr in enumerate(midi.tracks) if i > 0 for m in tr if m.type == "set_tempo")


def match(ref, got):
    """Each reference note to the label row of its key with the nearest onset (within 50 ms,
    each row once): onset errors, offset errors (where the reference has an end), unmatched."""
    on_err, off_err, unmatched = [], [], 0
    for key, ns in ref.items():
        rows = sorted(got.get(key, []))
        used = [False] * len(rows)
        for start, end in sorted(ns, key=lambda n: n[0]):
            best = None
            for j, (on, off) in enumerate(rows):
                if not used[j] and abs(on - start) <= 0.050 and (best is None or abs(on - start) < abs(rows[best][0] - start)):
                    best = j
            if best is None:
                unmatched += 1
                continue
            used[best] = True
            on_err.append(abs(rows[best][0] - start))
            if end is not None:
                off_err.append(abs(rows[best][1] - end))
    return sorted(on_err), sorted(off_err), unmatched


def timing(src, notes_csv):
    got = {}
    with open(notes_csv, newline="") as f:
        for row in csv.DictReader(f):
            got.setdefault((int(row["track"]), int(row["channel"]), int(row["pitch"])), []).append(
                (float(row["onset"]), float(row["offset"])))
    bound = BOUND_MS / 1000 + 1e-9
    out = {}
    # mido's times: every track's tempo events, as the file's players read them.
    ref_m, off_track0 = mido_onsets(src)
    on_m, _, un_m = match(ref_m, got)
    out.update(tempos_off_track0=off_track0, mido_unmatched=un_m,
               mido_on_max_ms=1000 * float(on_m[-1]) if on_m else float("nan"),
               mido_on_over=int(sum(e > bound for e in on_m)))
    import pretty_midi
    Instrument = pretty_midi.pretty_midi.Instrument

    class Located(Instrument):   # as Tests/Labels/pretty_midi_labels.py: keep channel and track
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            caller = sys._getframe(1).f_locals
            self.channel = caller.get("channel")
            self.track = caller.get("track")

    pretty_midi.pretty_midi.Instrument = Located
    try:
        pm = pretty_midi.PrettyMIDI(str(src))
    except Exception as e:
        out["error"] = f"pretty_midi cannot read it ({type(e).__name__}: {e})"
        return out
    finally:
        pretty_midi.pretty_midi.Instrument = Instrument
    ref = {}
    for inst in pm.instruments:
        for n in inst.notes:
            ref.setdefault((inst.track, inst.channel + 1, n.pitch), []).append((n.start, n.end))
    on_err, off_err, unmatched = match(ref, got)
    out.update(notes=sum(map(len, ref.values())), matched=len(on_err), unmatched=unmatched)
    if not on_err:
        out["error"] = "no note matched"
        return out
    out.update(on_max_ms=1000 * float(on_err[-1]), on_med_ms=1000 * float(on_err[len(on_err) // 2]),
               off_med_ms=1000 * float(off_err[len(off_err) // 2]), off_moved=int(sum(e > bound for e in off_err)),
               on_over=int(sum(e > bound for e in on_err)))
    return out


def timing_cause(t):
    """Why Carillon's onsets and pretty_midi's differ, when they do (None: they agree)."""
    if "error" in t and "mido_on_max_ms" in t:
        return (f"{t['error']}; against mido's times: {t['mido_on_over']} onsets beyond half a block, "
                f"{t['mido_unmatched']} unmatched, max {t['mido_on_max_ms']:.3f} ms")
    if not (t.get("on_over") or t.get("unmatched")):
        return None
    if t.get("tempos_off_track0") and not t.get("mido_on_over") and not t.get("mido_unmatched"):
        return (f"pretty_midi reads tempo from track 0 only ({t['tempos_off_track0']} set-tempo events on other "
                f"tracks; it warns of them); against mido's times, which use them, every onset is within half a "
                f"block (max {t['mido_on_max_ms']:.3f} ms)")
    return (f"Carillon's onsets off pretty_midi's: {t.get('on_over', 0)} beyond half a block, "
            f"{t.get('unmatched', 0)} unmatched (mido: {t.get('mido_on_over')} beyond, {t.get('mido_unmatched')} unmatched)")


# --- sound: the two renders ----------------------------------------------------

def mono(path):
    import numpy as np
    import soundfile as sf
    data, rate = sf.read(str(path), dtype="float32", always_2d=True)
    return data.sum(axis=1, dtype=np.float64), rate


def pearson(a, b):
    import numpy as np
    a = a - a.mean()
    b = b - b.mean()
    den = math.sqrt(float(a @ a) * float(b @ b))
    return float(a @ b) / den if den > 0 else float("nan")


def envelope(x, start, frame, count):
    import numpy as np
    seg = x[start:start + frame * count].reshape(count, frame)
    return np.sqrt((seg * seg).mean(axis=1))


def sound(c_path, f_path):
    """The measures of the module's header, fluidsynth's render shifted by whole blocks."""
    import numpy as np
    c, rate = mono(c_path)
    f, f_rate = mono(f_path)
    if f_rate != rate:
        raise RuntimeError(f"sample rates differ ({rate}, {f_rate})")
    frame = int(round(FRAME_S * rate))
    out = dict(c_s=len(c) / rate, f_s=len(f) / rate)
    best = (-2.0, 0)
    for k in range(-MAX_LAG_BLOCKS, MAX_LAG_BLOCKS + 1):   # f[t + lag] against c[t]
        lag = k * BLOCK
        c0, f0 = max(0, -lag), max(0, lag)
        n = min(len(c) - c0, len(f) - f0) // frame
        if n < 2:
            continue
        r = pearson(envelope(c, c0, frame, n), envelope(f, f0, frame, n))
        if not math.isnan(r) and r > best[0]:
            best = (r, k)
    if best[0] < -1.5:
        out.update(env_r=float("nan"), lag_blk=0)
        return out
    r, k = best
    lag = k * BLOCK
    c0, f0 = max(0, -lag), max(0, lag)
    n = min(len(c) - c0, len(f) - f0)
    a, b = c[c0:c0 + n], f[f0:f0 + n]
    ea, eb = float(a @ a), float(b @ b)
    d = a - b
    out.update(env_r=r, lag_blk=k,
               resid_db=10 * math.log10(max(float(d @ d) / eb, 1e-30)) if eb > 0 else float("nan"),
               level_db=10 * math.log10(ea / eb) if ea > 0 and eb > 0 else float("nan"))
    # Worst second.
    m = n // frame
    ea_env, eb_env = envelope(a, 0, frame, m), envelope(b, 0, frame, m)
    per = int(WINDOW_S / FRAME_S)
    loud = 10 ** (-50 / 20)
    worst = (2.0, float("nan"))
    for w in range(0, m - per + 1, per):
        x, y = ea_env[w:w + per], eb_env[w:w + per]
        if min(math.sqrt(float((x * x).mean())), math.sqrt(float((y * y).mean()))) < loud:
            continue   # a second either render is quiet in: the reverb's tail, a fade
        if x.std() < 0.1 * x.mean() and y.std() < 0.1 * y.mean():   # a steady second: r would correlate noise
            continue
        rw = pearson(x, y)
        if not math.isnan(rw) and rw < worst[0]:
            worst = (rw, w * FRAME_S)
    out.update(worst_r=worst[0] if worst[0] <= 1.0 else float("nan"), worst_s=worst[1] + c0 / rate)
    # Spectrum: 1/3-octave bands, 2048-sample frames (46 ms), hop 1024.
    import scipy.signal
    nper = 2048
    freqs, _, sa = scipy.signal.stft(a, rate, nperseg=nper, noverlap=nper // 2, boundary=None, padded=False)
    _, _, sb = scipy.signal.stft(b, rate, nperseg=nper, noverlap=nper // 2, boundary=None, padded=False)
    edges = 50.0 * 2 ** (np.arange(0, 29) / 3)   # 50 Hz … 12.7 kHz
    pa, pb = np.abs(sa) ** 2, np.abs(sb) ** 2
    bands_a = np.array([pa[(freqs >= lo) & (freqs < hi)].sum(axis=0) for lo, hi in zip(edges, edges[1:])])
    bands_b = np.array([pb[(freqs >= lo) & (freqs < hi)].sum(axis=0) for lo, hi in zip(edges, edges[1:])])
    energy = pa.sum(axis=0) + pb.sum(axis=0)
    frames_loud = energy > 1e-6 * energy.max() if energy.size else energy > 0   # within 60 dB of the loudest
    if frames_loud.sum() > 2:
        la = 10 * np.log10(bands_a[:, frames_loud] + 1e-12)
        lb = 10 * np.log10(bands_b[:, frames_loud] + 1e-12)
        floor = max(la.max(), lb.max()) - 80   # 80 dB below the loudest band: quieter is noise
        out["spec_r"] = pearson(np.maximum(la, floor).ravel(), np.maximum(lb, floor).ravel())
    else:
        out["spec_r"] = float("nan")
    return out


# --- one song -------------------------------------------------------------------

def nice(cmd):
    return ["nice", "-n", "10"] + cmd


def render_carillon(args, src, wav, extra=(), labels=False):
    cmd = [args.carillon, "render", str(src), "-o", str(wav), "--soundfont", args.font, "-r", str(RATE),
           "--threads", "1", "-q"] + list(extra) + (["--labels"] if labels else [])
    p = subprocess.run(nice(cmd), capture_output=True, text=True)
    return p.returncode, (p.stderr.strip().splitlines() or [""])[-1]


def render_fluid(args, mid, wav, extra=()):
    cmd = ["fluidsynth", "-ni", "-F", str(wav), "-r", str(RATE)] + list(extra) + [args.font, str(mid)]
    p = subprocess.run(nice(cmd), capture_output=True, text=True)
    ok = p.returncode == 0 and wav.is_file() and wav.stat().st_size > 44
    return ok, (p.stderr.strip().splitlines() or [""])[-1]


# One thing changed at a time, in this order: (label, carillon flags, fluidsynth flags,
# MIDI kinds dropped, whether the song has it, whether fluidsynth gets the song itself).
ABLATIONS = [
    ("reverb and chorus", ["--no-reverb", "--no-chorus"], ["-R", "0", "-C", "0"], (), lambda f: True, False),
    ("sustain pedal", [], [], ("pedal",), lambda f: f["pedal"] > 0, False),
    ("SysEx", [], [], ("sysex",), lambda f: f["sysex"] > 0, False),
    ("program changes on the drum channel", [], [], ("drumprog",), lambda f: f["drum_programs"] > 0, False),
]
# Carillon has no polyphony option (its synths keep FluidSynth's 256), so voice stealing
# is tested on fluidsynth alone: its render with 1024 voices against its own with 256.
STOLEN_R = 0.99


def one(args, row):
    name = row["name"]
    src = pathlib.Path(args.corpus) / name
    stem = name.replace("/", "__")
    work = pathlib.Path(args.out) / "work" / stem
    work.mkdir(parents=True, exist_ok=True)
    result = dict(name=name)
    started = time.time()
    try:
        result["features"] = features(src)
    except Exception as e:
        result["features"] = None
        result["mido_error"] = f"{type(e).__name__}: {e}"
    c_wav, f_wav, flat = work / "c.wav", work / "f.wav", work / "flat.mid"
    rc, err = render_carillon(args, src, c_wav, labels=True)
    if rc != 0:
        result["cause"] = f"carillon refuses the file: {err}"
        return finish(args, result, work, started)
    if result["features"] is None:
        result["cause"] = f"mido cannot read it ({result['mido_error']}): no flattened copy for fluidsynth"
        return finish(args, result, work, started)
    result["timing"] = timing(src, work / "c.notes.csv")
    result["timing_cause"] = timing_cause(result["timing"])
    flatten(src, flat)
    ok, err = render_fluid(args, flat, f_wav)
    if not ok:
        result["cause"] = f"fluidsynth renders nothing: {err}"
        return finish(args, result, work, started)
    s = sound(c_wav, f_wav)
    result["sound"] = s
    r = s.get("env_r", float("nan"))
    if s.get("worst_r", 1.0) < THRESHOLD:   # the whole agrees but one second does not: say where it is
        end = result["features"]["length_s"]
        where = (f"the song's last second (End of Track at {end:.1f} s; fluidsynth's render stops "
                 f"{s['f_s'] - end:.1f} s after it, Carillon's {s['c_s'] - end:.1f} s)"
                 if s["worst_s"] >= end - 2 * WINDOW_S else "")
        result["worst_note"] = (f"worst second at {s['worst_s']:.0f} s, r {s['worst_r']:.3f}: "
                                + (where or f"it holds {json.dumps(events_near(src, s['worst_s']))}"))
    if math.isnan(r):
        result["cause"] = "both renders silent (nothing to correlate)"
    elif r < THRESHOLD:
        result["cause"] = explain(args, src, work, result)
    return finish(args, result, work, started)


def explain(args, src, work, result):
    f = result["features"]
    tried = []
    for label, c_flags, f_flags, drop, applies, as_is in ABLATIONS:
        if not applies(f):
            continue
        c_src, f_src = src, work / "abl.flat.mid"
        if drop:
            c_src = work / "abl.mid"
            strip(src, c_src, drop)
        if as_is:
            f_src = src
        else:
            flatten(src, f_src, drop)
        cw, fw = work / "abl.c.wav", work / "abl.f.wav"
        rc, _ = render_carillon(args, c_src, cw, c_flags)
        ok, _ = render_fluid(args, f_src, fw, f_flags)
        if rc != 0 or not ok:
            tried.append(f"{label}: a render failed")
            continue
        r = sound(cw, fw).get("env_r", float("nan"))
        tried.append(f"{label}: {r:.3f}")
        if r >= THRESHOLD:
            result["ablations"] = tried
            return f"{label} (without it env_r {r:.3f})"
    if f["peak_notes"] * 2 > POLYPHONY // 4:   # stereo presets take two voices a note, layers more
        fw = work / "abl.f.wav"
        flatten(src, work / "abl.flat.mid")
        ok, _ = render_fluid(args, work / "abl.flat.mid", fw, ["-o", "synth.polyphony=1024"])
        if ok:
            r = sound(work / "f.wav", fw).get("env_r", float("nan"))
            tried.append(f"voices: fluidsynth 256 against 1024 {r:.3f}")
            if r < STOLEN_R:
                result["ablations"] = tried
                return (f"voices stolen at the polyphony limit (256): fluidsynth's render with 1024 voices "
                        f"correlates {r:.3f} with its own at 256, and the two programs steal differently")
    result["ablations"] = tried
    s = result["sound"]
    near = events_near(src, s["worst_s"]) if not math.isnan(s.get("worst_s", float("nan"))) else {}
    return (f"unexplained (tried: {'; '.join(tried)}); worst second at {s.get('worst_s', float('nan')):.0f} s "
            f"(r {s.get('worst_r', float('nan')):.3f}) holds {json.dumps(near)}")


def finish(args, result, work, started):
    result["seconds"] = round(time.time() - started, 1)
    (pathlib.Path(args.out) / "rows").mkdir(parents=True, exist_ok=True)
    stem = work.name
    with open(pathlib.Path(args.out) / "rows" / f"{stem}.json", "w") as fh:
        json.dump(result, fh)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return result


# --- the run and its summary ------------------------------------------------------

def run(args):
    manifest = pathlib.Path(args.manifest)
    corpus = pathlib.Path(args.corpus)
    if not check(manifest, corpus):
        raise SystemExit("the corpus is not as the manifest lists it")
    rows = read_manifest(manifest)
    if args.only:
        rows = [r for r in rows if r["name"] in args.only]
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fluid = subprocess.run(["fluidsynth", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    header = (f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine: {os.cpu_count()} cores, "
              f"load {' '.join(open('/proc/loadavg').read().split()[:3])}\n"
              f"carillon: {args.carillon}; {fluid}; font {args.font}; jobs {args.jobs}; {len(rows)} songs\n")
    (out / "run.txt").write_text(header)
    print(header, end="", flush=True)
    start = time.time()
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(one, args, r): r["name"] for r in rows}
        for i, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            try:
                res = fut.result()
                r = res.get("sound", {}).get("env_r", float("nan"))
                print(f"[{i}/{len(rows)}] {res['name']}: env_r {r:.3f} ({res['seconds']} s)"
                      + (f" — {res['cause']}" if res.get("cause") else ""), flush=True)
            except Exception as e:
                print(f"[{i}/{len(rows)}] {futures[fut]}: the script failed: {type(e).__name__}: {e}", flush=True)
    with open(out / "run.txt", "a") as fh:
        fh.write(f"wall: {time.time() - start:.0f} s; load at the end "
                 f"{' '.join(open('/proc/loadavg').read().split()[:3])}\n")
    summary(args)


def quantile(v, q):
    if not v:
        return float("nan")
    pos = q * (len(v) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def summary(args):
    out = pathlib.Path(args.out)
    results = [json.load(open(p)) for p in sorted((out / "rows").glob("*.json"))]
    nan = float("nan")
    table = []
    for res in results:
        t, s = res.get("timing") or {}, res.get("sound") or {}
        table.append([res["name"], t.get("notes", 0), t.get("on_max_ms", nan), t.get("on_med_ms", nan),
                      t.get("off_med_ms", nan), t.get("off_moved", 0), t.get("unmatched", 0),
                      s.get("c_s", nan), s.get("f_s", nan), s.get("lag_blk", 0), s.get("env_r", nan),
                      s.get("worst_r", nan), s.get("worst_s", nan), s.get("resid_db", nan), s.get("spec_r", nan),
                      s.get("level_db", nan), res.get("cause", "")])
    table.sort(key=lambda r: (math.isnan(r[10]), r[10]))
    with open(out / "results.tsv", "w") as fh:
        fh.write("\t".join(COLUMNS) + "\n")
        for r in table:
            fh.write("\t".join(x if isinstance(x, str) else (f"{x:.4f}" if isinstance(x, float) else str(x)) for x in r) + "\n")
    lines = []
    w = max(len(r[0]) for r in table) if table else 4
    lines.append(f"{'song':<{w}} {'notes':>6} {'on_max':>6} {'on_med':>6} {'off_med':>7} {'moved':>5} "
                 f"{'c_s':>6} {'f_s':>6} {'lag':>3} {'env_r':>6} {'worst':>6} {'at_s':>5} {'resid':>6} {'spec_r':>6} {'lvl':>5}")
    for r in table:
        lines.append(f"{r[0]:<{w}} {r[1]:6d} {r[2]:6.2f} {r[3]:6.2f} {r[4]:7.2f} {r[5]:5d} {r[7]:6.1f} {r[8]:6.1f} "
                     f"{r[9]:3d} {r[10]:6.3f} {r[11]:6.3f} {r[12]:5.0f} {r[13]:6.1f} {r[14]:6.3f} {r[15]:5.2f}")
    timed = [r for r in table if not math.isnan(r[2])]
    on_max = sorted(r[2] for r in timed)
    on_med = sorted(r[3] for r in timed)
    lines.append("")
    lines.append(f"songs: {len(table)}; timing read by pretty_midi on {len(timed)}: {sum(r[1] for r in timed)} notes, "
                 f"{sum(r[6] for r in timed)} unmatched; onset error max {quantile(on_max, 1):.3f} ms "
                 f"(bound {BOUND_MS:.3f}), median of the songs' medians {quantile(on_med, .5):.3f} ms; "
                 f"songs with an onset beyond the bound: {sum(r[2] > BOUND_MS + 1e-6 for r in timed)}; "
                 f"offsets beyond it (FluidSynth's ending rules against pretty_midi's pairing): {sum(r[5] for r in timed)}")
    compared = [r for r in table if not math.isnan(r[10])]
    for label, col in (("env_r", 10), ("worst_r (1 s)", 11), ("spec_r", 14)):
        v = sorted(r[col] for r in compared if not math.isnan(r[col]))
        lines.append(f"{label:<14} min {quantile(v, 0):.3f}  p5 {quantile(v, .05):.3f}  p25 {quantile(v, .25):.3f}  "
                     f"median {quantile(v, .5):.3f}  <0.95: {sum(x < .95 for x in v)}  <0.90: {sum(x < .90 for x in v)}")
    v = sorted(r[13] for r in compared if not math.isnan(r[13]))
    lines.append(f"{'resid_db':<14} median {quantile(v, .5):.1f}  p75 {quantile(v, .75):.1f}  max {quantile(v, 1):.1f}; "
                 f"lag not 0 blocks on {sum(r[9] != 0 for r in compared)}")
    mido_max = [(res.get("timing") or {}).get("mido_on_max_ms", nan) for res in results]
    mido_max = sorted(x for x in mido_max if not math.isnan(x))
    lines.append(f"against mido's times (every track's tempo events) on {len(mido_max)} songs: onset error max "
                 f"{quantile(mido_max, 1):.3f} ms; songs with an onset beyond the bound: "
                 f"{sum((res.get('timing') or {}).get('mido_on_over', 0) > 0 for res in results)}, with a note unmatched: "
                 f"{sum((res.get('timing') or {}).get('mido_unmatched', 0) > 0 for res in results)}")
    timing_causes = [(res["name"], res["timing_cause"]) for res in results if res.get("timing_cause")]
    lines.append(f"songs whose onsets differ from pretty_midi's or that pretty_midi cannot read: {len(timing_causes)}")
    for name, cause in sorted(timing_causes):
        lines.append(f"  {name}: {cause}")
    worst_notes = [(res["name"], res["worst_note"]) for res in results if res.get("worst_note")]
    lines.append(f"songs with a second below {THRESHOLD} (worst_r): {len(worst_notes)}")
    for name, note in sorted(worst_notes):
        lines.append(f"  {name}: {note}")
    lines.append("")
    explained = [r for r in table if r[16]]
    lines.append(f"below {THRESHOLD} or not compared: {len(explained)}")
    for r in explained:
        lines.append(f"  {r[0]} (env_r {r[10]:.3f}): {r[16]}")
    text = "\n".join(lines)
    (out / "summary.txt").write_text(text + "\n")
    print(text)


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


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="verb", required=True)

    def common(s):
        s.add_argument("--manifest", default=str(HERE / "fidelity-corpus.txt"))
        s.add_argument("--corpus", default="/work/corpus30/songs")
        s.add_argument("--out", default=str(HERE.parent / "bench-out" / "fidelity"))
    common(sub.add_parser("check"))
    r = sub.add_parser("run")
    common(r)
    r.add_argument("--carillon", default=str(HERE.parent / ".build" / "release" / "carillon"))
    r.add_argument("--font", default="/usr/share/sounds/sf2/FluidR3_GM.sf2")
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--keep", action="store_true", help="keep the renders under OUT/work")
    r.add_argument("--only", nargs="*", help="these manifest names only")
    common(sub.add_parser("summary"))
    fl = sub.add_parser("flatten")
    fl.add_argument("src")
    fl.add_argument("dst")
    se = sub.add_parser("select")
    se.add_argument("count", type=int)
    se.add_argument("max_seconds", type=float)
    a = p.parse_args()
    if a.verb == "check":
        sys.exit(0 if check(pathlib.Path(a.manifest), pathlib.Path(a.corpus)) else 1)
    elif a.verb == "run":
        a.carillon = str(pathlib.Path(a.carillon).resolve())
        run(a)
    elif a.verb == "summary":
        summary(a)
    elif a.verb == "flatten":
        flatten(a.src, a.dst)
    elif a.verb == "select":
        select(a.count, a.max_seconds, sys.stdin.read().split("\n"))


if __name__ == "__main__":
    main()
