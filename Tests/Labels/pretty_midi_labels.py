"""`carillon render --labels` against pretty_midi's note times on real files.

    python pretty_midi_labels.py LABEL_DIR RATE GRID FILE.mid...

LABEL_DIR holds NAME.notes.csv for each FILE.mid (as `carillon render DIR
--output-dir LABEL_DIR --labels` writes them). For each file pretty_midi reads
the notes; each note is matched with a label row by (track, channel, pitch)
and order of onset. A matched note's onset and offset must be within half a
grid block (the nearest grid point: GRID/2 frames, plus half a frame for the
rounding to a frame) of pretty_midi's time, and equal to float precision when
pretty_midi's time falls on the grid.

Where the offsets differ, the label must be where FluidSynth ends the voice:
at the next event of its key on its channel, in the order the file plays them
(mido, every track merged), held to FluidSynth's 10 ms minimum length. That
event is a note-on (the key struck again: FluidSynth releases the older voice),
a note-off in the same tick (a zero-length note: pretty_midi keeps it open to
the key's next note-off), or a note-off pretty_midi pairs with another note
(it pairs within a track and ends every open note of the key at one
note-off). Those are counted by kind; any other difference fails, as does a
label row pretty_midi has no note for, unless it lasts to the end (a note-on
never ended: pretty_midi drops it).

Prints one line per file and a total; exits 1 on a failure.
"""
import csv
import os
import pathlib
import sys
import warnings

import mido
import pretty_midi

warnings.filterwarnings("ignore")   # pretty_midi warns about tempo events off track 0

# pretty_midi keeps a note's channel and track only in the key of a local dict
# (`instrument_map[(program, channel, track)]`); every instrument is made in
# `__get_instrument(program, channel, track, create_new)`, so an Instrument
# made there records its caller's channel and track.
_Instrument = pretty_midi.pretty_midi.Instrument


class _Located(_Instrument):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        caller = sys._getframe(1).f_locals
        self.channel = caller.get("channel")
        self.track = caller.get("track")


pretty_midi.pretty_midi.Instrument = _Located

MIN_NOTE_S = 0.010   # FluidSynth's synth.min-note-length
LIMIT = int(os.environ.get("CARILLON_LABEL_FAILURES", "40"))   # failures printed


def key_events(path):
    """(channel 1-16, key) -> [(seconds, is note-on)] in the order they play, every track merged (mido)."""
    events = {}
    t = 0.0
    for msg in mido.MidiFile(str(path), clip=True):
        t += msg.time
        if msg.type in ("note_on", "note_off"):
            events.setdefault((msg.channel + 1, msg.note), []).append((t, msg.type == "note_on" and msg.velocity > 0))
    return events


def main():
    label_dir = pathlib.Path(sys.argv[1])
    rate, grid = int(sys.argv[2]), int(sys.argv[3])
    half = (grid / 2 + 0.5) / rate + 1e-9
    totals = dict(files=0, unread=0, pm=0, labels=0, matched=0, exact=0, on_grid=0,
                  restruck=0, short=0, zero=0, offs=0, unended=0, unmatched_pm=0, unmatched_labels=0, bad=0)
    worst = 0.0
    failures = []
    for path in map(pathlib.Path, sys.argv[4:]):
        try:
            pm = pretty_midi.PrettyMIDI(str(path))
        except Exception as e:   # pretty_midi (mido) refuses some damaged files Carillon reads
            print(f"{path.name}: pretty_midi cannot read it ({type(e).__name__}: {e})")
            totals["unread"] += 1
            continue
        notes_csv = label_dir / (path.stem + ".notes.csv")
        with open(notes_csv, newline="") as f:
            labels = list(csv.DictReader(f))
        totals["files"] += 1
        ref = {}
        for inst in pm.instruments:
            for n in inst.notes:
                ref.setdefault((inst.track, inst.channel + 1, n.pitch), []).append(n)
        got = {}
        for row in labels:
            got.setdefault((int(row["track"]), int(row["channel"]), int(row["pitch"])), []).append(
                (float(row["onset"]), float(row["offset"]), int(row["velocity"])))
        keys = key_events(path)

        def explained(events, onset, offset):
            """Which rule ends a note at `offset`: the event after one of its key's note-ons at `onset`."""
            held = offset - onset <= MIN_NOTE_S + grid / rate + 1e-9   # at most the minimum length, to the grid
            for (t, on), (u, next_on) in zip(events, events[1:]):
                if on and near(t, onset) and (near(offset, u) or u - onset < MIN_NOTE_S and held):
                    if next_on:
                        return "restruck"
                    return "zero" if near(u, onset) else ("short" if u - onset < MIN_NOTE_S else "offs")
            return None

        counts = dict.fromkeys(totals, 0)
        counts["pm"] = sum(len(v) for v in ref.values())
        counts["labels"] = len(labels)

        def near(a, b):
            return abs(a - b) <= half

        def on_grid(t):
            frames = t * rate
            return abs(frames - round(frames)) < 1e-6 and round(frames) % grid == 0

        for key, ns in ref.items():
            ns = sorted(ns, key=lambda n: (n.start, n.end))
            rows = sorted(got.get(key, []))
            used = [False] * len(rows)
            for i, n in enumerate(ns):
                # the first unused row in order whose onset is this note's, to the grid
                j = next((j for j, r in enumerate(rows) if not used[j] and near(r[0], n.start)), None)
                if j is None:
                    counts["unmatched_pm"] += 1
                    failures.append(f"{path.name}: no label for track {key[0]} ch {key[1]} key {key[2]} at {n.start:.6f}")
                    continue
                used[j] = True
                onset, offset, velocity = rows[j]
                counts["matched"] += 1
                worst = max(worst, abs(onset - n.start))
                for is_onset, t, mine in ((True, n.start, onset), (False, n.end, offset)):
                    if on_grid(t):
                        counts["on_grid"] += 1
                        if abs(mine - t) < 1e-9:
                            counts["exact"] += 1
                        elif is_onset or near(mine, t):   # an offset moved by rule is judged below
                            counts["bad"] += 1
                            failures.append(f"{path.name}: {t:.9f} is on the grid but the label says {mine:.9f}")
                if velocity != n.velocity:
                    counts["bad"] += 1
                    failures.append(f"{path.name}: key {key[2]} at {n.start:.6f}: velocity {velocity}, pretty_midi {n.velocity}")
                if near(offset, n.end):
                    worst = max(worst, abs(offset - n.end))
                    continue
                # The offsets differ by rule, or the label is wrong. FluidSynth ends a
                # voice at the next event of its key on its channel, from any track: a
                # note-off, or a note-on (it releases the older voice), held to its
                # 10 ms minimum length. pretty_midi pairs within a track, keeps a note
                # whose note-off shares its tick open to the key's next note-off, and
                # ends every open note of the key at one note-off.
                kind = explained(keys.get(key[1:], []), onset, offset)
                if kind:
                    counts[kind] += 1
                else:
                    counts["bad"] += 1
                    failures.append(f"{path.name}: track {key[0]} ch {key[1]} key {key[2]} at {n.start:.6f}: "
                                    f"offset {offset:.6f}, pretty_midi {n.end:.6f}")
            for j, r in enumerate(rows):
                if not used[j]:
                    counts["unmatched_labels"] += 1
        # Rows with no pretty_midi note: a note-on never ended lasts to the end
        # in the labels and pretty_midi drops it; anything else is a failure.
        for key, rows in got.items():
            if key not in ref:
                counts["unmatched_labels"] += len(rows)
        # pretty_midi drops a note it never sees ended; such rows end at the
        # piece's end. Count the unmatched label rows that do as unended.
        end = max((float(r["offset"]) for r in labels), default=0)
        unended = 0
        for key, rows in got.items():
            matched_onsets = {round(n.start * rate) for n in ref.get(key, [])}
            for r in rows:
                if round(r[0] * rate) not in matched_onsets and abs(r[1] - end) < 1e-9:
                    unended += 1
        counts["unended"] = min(unended, counts["unmatched_labels"])
        if counts["unmatched_labels"] > counts["unended"]:
            failures.append(f"{path.name}: {counts['unmatched_labels'] - counts['unended']} label rows with no pretty_midi note")
        print(f"{path.name}: {counts['pm']} pretty_midi notes, {counts['labels']} label rows, {counts['matched']} matched "
              f"({counts['on_grid']} times on the grid, {counts['exact']} equal); offsets by rule: "
              f"{counts['restruck']} struck again, {counts['zero']} zero-length, {counts['short']} under 10 ms, "
              f"{counts['offs']} note-off on another track; "
              f"unmatched: {counts['unmatched_pm']} pretty_midi, {counts['unmatched_labels']} labels "
              f"({counts['unended']} never ended)")
        for k in totals:
            if k not in ("files", "unread"):
                totals[k] += counts[k]
    t = totals
    print(f"TOTAL {t['files']} files read by pretty_midi ({t['unread']} it cannot read): {t['pm']} notes, "
          f"{t['labels']} label rows, {t['matched']} matched; times on the grid {t['on_grid']}, equal {t['exact']}; "
          f"offsets different by rule: {t['restruck']} struck again, {t['zero']} zero-length, {t['short']} under 10 ms, "
          f"{t['offs']} ended by a note-off pretty_midi pairs elsewhere; "
          f"unmatched {t['unmatched_pm']} pretty_midi notes, {t['unmatched_labels']} label rows "
          f"({t['unended']} never ended); largest matched difference {worst * rate:.2f} frames "
          f"(bound {grid / 2 + 0.5:.1f})")
    unexplained = t["unmatched_labels"] - t["unended"]
    if failures or t["matched"] == 0:
        for line in failures[:LIMIT]:
            print("FAIL", line)
        if len(failures) > LIMIT:
            print(f"FAIL … {len(failures) - LIMIT} more")
        print(f"FAILED: {len(failures)} differences ({unexplained} label rows unexplained)")
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
