#!/usr/bin/env bash
# Benchmark (not a test): how alike `carillon render` and `fluidsynth -ni -F`
# render the same MIDI files, file by file (Benchmarks/compare_fluidsynth.py
# measures, see its header):
#   - Pearson correlation of the two 10 ms RMS envelopes (mono sum), both from
#     sample 0 over the common length (r0), and at the best lag within ±50 ms
#     (lag_ms, r_lag);
#   - the waveform residual at that lag (RMS of the difference over fluidsynth's
#     RMS, dB), the level difference, both lengths, and the 5 s window where
#     the envelopes differ most (where to listen first).
# Prints a table per file (worst first) and the distribution of r0 and r_lag
# (min, 5th and 25th percentile, median, counts below 0.95 and 0.90).
#
# Settings are each program's defaults, which match: gain 0.2, 44.1 kHz,
# reverb and chorus on, 4th-order interpolation, polyphony 256 (as
# Benchmarks/render.sh calls both). Carillon's render goes on after the last
# event until the tail is silent (at most 10 s); fluidsynth's -F stops when its
# player ends, so the lengths differ by design: envelopes are compared over the
# common length.
#
#   Benchmarks/compare-fluidsynth.sh PATH...     # MIDI files and/or folders (searched recursively)
#   CARILLON=/work/build-bench/release/carillon THREADS=2 JOBS=2 \
#     COUNT=60 MAX_SECONDS=240 Benchmarks/compare-fluidsynth.sh /work/corpus/songs
#
# Environment:
#   CARILLON     carillon binary (unset: `swift build -c release --product carillon`
#                here, then .build/release/carillon)
#   FONT         SoundFont (default FluidR3_GM)
#   THREADS      passed to carillon as --threads (default 1)
#   JOBS         files compared at once (default 1)
#   COUNT        compare COUNT files, evenly spaced in the sorted list (default 0: all)
#   MAX_SECONDS  skip files longer than this by mido's reading (default 0: no limit)
#   OUT          results folder (default bench-out/compare-fluidsynth/threads$THREADS);
#                results.tsv and summary.txt are left there
#   FLUID_CACHE  fluidsynth renders kept here and reused while newer than the MIDI
#                file and the font (default bench-out/compare-fluidsynth/fluid-<font>);
#                a second run (other THREADS, other binary) renders only Carillon
#   FLAT=1       fluidsynth renders a tempo-flattened copy of each file (one tempo,
#                every event at its exact time by mido; compare_fluidsynth.py flatten):
#                FluidSynth 2.3's player drifts on files with many tempo changes, and
#                this takes that out of the comparison (cache: fluid-flat-<font>)
#   KEEP=1       keep Carillon's renders in $OUT/carillon
#   PYTHON       a Python with numpy, soundfile and mido (default bench-out/venv,
#                made and filled from PyPI if missing)
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
HERE=$(cd "$(dirname "$0")/.." && pwd)
paths=()
for p in "$@"; do paths+=("$(realpath "$p")"); done
cd "$HERE"

if [ -z "${CARILLON:-}" ]; then
    swift build -c release --product carillon >&2
    CARILLON=.build/release/carillon
fi
CARILLON=$(realpath "$CARILLON")
FONT=${FONT:-/usr/share/sounds/sf2/FluidR3_GM.sf2}
THREADS=${THREADS:-1}
JOBS=${JOBS:-1}
COUNT=${COUNT:-0}
MAX_SECONDS=${MAX_SECONDS:-0}
FLAT=${FLAT:-0}
flat=""; [ "$FLAT" = 1 ] && flat="-flat"
OUT=$(realpath -m "${OUT:-bench-out/compare-fluidsynth/threads$THREADS$flat}")
FLUID_CACHE=$(realpath -m "${FLUID_CACHE:-bench-out/compare-fluidsynth/fluid$flat-$(basename "$FONT" .sf2)}")
KEEP=${KEEP:-0}
RATE=44100
HELPER="$HERE/Benchmarks/compare_fluidsynth.py"

[ -x "$CARILLON" ] || { echo "no carillon binary at $CARILLON (set CARILLON)" >&2; exit 1; }
if [ -z "${PYTHON:-}" ]; then
    PYTHON="$HERE/bench-out/venv/bin/python"
    if [ ! -x "$PYTHON" ]; then
        echo "== creating bench-out/venv" >&2
        python3 -m venv "$HERE/bench-out/venv"
    fi
    "$PYTHON" -c "import numpy, soundfile, mido" 2>/dev/null \
        || "$HERE/bench-out/venv/bin/pip" install -q numpy soundfile mido >&2
fi

mkdir -p "$OUT/rows" "$OUT/carillon" "$OUT/flat" "$FLUID_CACHE"
rm -f "$OUT"/rows/*.tsv "$OUT/failures"

# Inputs: files as given, folders searched like `carillon render` does.
find "${paths[@]}" -type f \( -iname '*.mid' -o -iname '*.midi' -o -iname '*.kar' -o -iname '*.rmi' \) \
    | "$PYTHON" "$HELPER" select "$COUNT" "$MAX_SECONDS" > "$OUT/inputs"
n=$(grep -c . "$OUT/inputs" || true)
[ "$n" -gt 0 ] || { echo "no MIDI files found" >&2; exit 1; }

# One file: both renders, then the helper's line into rows/NAME.tsv.
# NAME: the parent folder and the file name (the corpus keeps them unique).
compare_one() {
    local f=$1 name
    name="$(basename "$(dirname "$f")")__$(basename "${f%.*}")"
    local c="$OUT/carillon/$name.wav" fl="$FLUID_CACHE/$name.wav"
    if [ ! -s "$fl" ] || [ "$fl" -ot "$f" ] || [ "$fl" -ot "$FONT" ]; then
        local src=$f
        if [ "$FLAT" = 1 ]; then
            src="$OUT/flat/$name.mid"
            "$PYTHON" "$HELPER" flatten "$f" "$src" || { echo "$name flatten failed" >> "$OUT/failures"; return 0; }
        fi
        # A name of its own: two runs sharing the cache may render the same file.
        fluidsynth -ni -F "$fl.$$.tmp.wav" -r $RATE "$FONT" "$src" >/dev/null 2>&1 \
            && mv "$fl.$$.tmp.wav" "$fl" || { echo "$name fluidsynth failed" >> "$OUT/failures"; return 0; }
    fi
    if ! "$CARILLON" render "$f" -o "$c" --soundfont "$FONT" -r $RATE --threads "$THREADS" -q 2> "$OUT/rows/$name.err"; then
        echo "$name carillon failed: $(tail -n1 "$OUT/rows/$name.err")" >> "$OUT/failures"; return 0
    fi
    "$PYTHON" "$HELPER" pair "$name" "$c" "$fl" > "$OUT/rows/$name.tsv" \
        || echo "$name compare failed" >> "$OUT/failures"
    [ "$KEEP" = 1 ] || rm -f "$c"
    [ -s "$OUT/rows/$name.err" ] || rm -f "$OUT/rows/$name.err"
}
export -f compare_one
export OUT FLUID_CACHE FONT RATE CARILLON THREADS PYTHON HELPER KEEP FLAT

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(fluidsynth --version 2>/dev/null | head -n1)"
echo "carillon: $CARILLON ($(stat -c %y "$CARILLON" | cut -d. -f1)); --threads $THREADS; font: $FONT"
echo "files: $n (COUNT=$COUNT MAX_SECONDS=$MAX_SECONDS) from ${#paths[@]} path(s), first ${paths[0]}; JOBS=$JOBS; FLAT=$FLAT"
start=$(date +%s)
tr '\n' '\0' < "$OUT/inputs" | xargs -0 -P "$JOBS" -I{} bash -c 'compare_one "$1"' _ {}
echo "wall: $(( $(date +%s) - start )) s"
echo

{ "$PYTHON" "$HELPER" header; cat "$OUT"/rows/*.tsv 2>/dev/null; } > "$OUT/results.tsv"
"$PYTHON" "$HELPER" summary "$OUT/results.tsv" | tee "$OUT/summary.txt"
if [ -s "$OUT/failures" ]; then
    echo; echo "failures:"; sed 's/^/  /' "$OUT/failures" | tee -a "$OUT/summary.txt"
fi
echo; echo "results: $OUT/results.tsv"
