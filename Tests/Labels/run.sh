#!/usr/bin/env bash
# `carillon render --labels` against pretty_midi (from PyPI, in a virtual
# environment made here) on real MIDI files: the openttd-openmsx songs (from
# scripts/setup) and the damaged files of Tests/Fixtures that pretty_midi reads.
# Each note is matched by track, channel, pitch and order; onsets and offsets
# must be within half a 64-frame block of pretty_midi's times (the nearest grid
# point), equal where pretty_midi's time is on the grid (pretty_midi_labels.py).
#   Tests/Labels/run.sh            (after `swift build`; CARILLON=path for another binary)
#   CARILLON_LABEL_SHIFT=64 Tests/Labels/run.sh   # the check itself: labels moved a block must fail
# Prints a line per file and a total; exits non-zero on a failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.build/labels-venv
if [ ! -x "$venv/bin/python" ]; then
    echo "== creating $venv with pretty_midi from PyPI" >&2
    python3 -m venv "$venv"
fi
"$venv/bin/python" -c "import pretty_midi" 2>/dev/null || "$venv/bin/pip" install -q "pretty_midi==0.2.11.post0" >&2
carillon=${CARILLON:-.build/debug/carillon}
[ -x "$carillon" ] || swift build --product carillon >&2
rate=44100 grid=64
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/in"
files=(/usr/share/games/openttd/baseset/openmsx/*.mid Tests/Fixtures/DamagedMIDI/*.mid Tests/Fixtures/DamagedMIDI/*.MID)
for f in "${files[@]}"; do ln -s "$(realpath "$f")" "$work/in/$(basename "$f")"; done
# Labels only are compared: TimGM6mb (small) and 8 kHz would be quicker, but the
# grid is in frames at the render rate, so render at 44.1 kHz as a dataset would.
"$carillon" render "$work/in" --output-dir "$work/out" --labels --jobs 2 -q \
    --soundfont /usr/share/sounds/sf2/TimGM6mb.sf2 -r $rate --tail 0 >&2
if [ -n "${CARILLON_LABEL_SHIFT:-}" ]; then   # move every onset and offset by this many frames
    for csv in "$work"/out/*.notes.csv; do
        awk -F, -v OFS=, -v d="$CARILLON_LABEL_SHIFT" -v r=$rate \
            'NR > 1 { $1 = sprintf("%.9f", $1 + d / r); $2 = sprintf("%.9f", $2 + d / r) } 1' "$csv" > "$csv.t"
        mv "$csv.t" "$csv"
    done
fi
exec "$venv/bin/python" Tests/Labels/pretty_midi_labels.py "$work/out" $rate $grid "${files[@]}"
