#!/usr/bin/env bash
# Benchmark (not a test): batch rendering of real-world songs, one
# `carillon render DIR --output-dir OUT --jobs N` command against
# `fluidsynth -ni -F` run once per file (a loop, as a shell script would do it)
# and two such loops in parallel (xargs -P N), side by side in one run: wall
# time, files per second, seconds of audio per second, ratios.
#
# The sample: SAMPLE files of the corpus (default 100), evenly spaced in the
# sorted list of those at most MAX_SECONDS long by mido's reading (default
# 100 s), linked into one folder (sub-folders mirrored) that Carillon is given
# whole. The corpus is not in the repository: see Benchmarks/README.md.
#
#   Benchmarks/render-corpus.sh [CORPUS_DIR]      # default /work/corpus/songs
#   CARILLON=/path/to/carillon JOBS=2 SAMPLE=100 MAX_SECONDS=100 FONT=... Benchmarks/render-corpus.sh
#
# LIST=FILE: render these paths (one a line) instead of choosing a sample (the
# choice parses every file with mido, minutes for a large corpus on a busy machine).
# CARILLON unset: builds `swift build -c release --product carillon` and uses
# .build/release/carillon. PYTHON: a Python with mido (default bench-out/venv,
# made and filled from PyPI if missing). Outputs go under bench-out/ and are
# removed at the end.
set -euo pipefail
CORPUS=$(realpath "${1:-/work/corpus/songs}")
cd "$(dirname "$0")/.."

FONT=${FONT:-/usr/share/sounds/sf2/FluidR3_GM.sf2}
JOBS=${JOBS:-2}
SAMPLE=${SAMPLE:-100}
MAX_SECONDS=${MAX_SECONDS:-100}
RATE=44100

if [ -z "${CARILLON:-}" ]; then
    swift build -c release --product carillon >&2
    CARILLON=.build/release/carillon
fi
CARILLON=$(realpath "$CARILLON")
if [ -z "${PYTHON:-}" ]; then
    PYTHON=bench-out/venv/bin/python
    [ -x "$PYTHON" ] || python3 -m venv bench-out/venv
    "$PYTHON" -c "import mido" 2>/dev/null || bench-out/venv/bin/pip install -q mido >&2
fi

mkdir -p bench-out
WORK=$(mktemp -d -p bench-out render-corpus.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

wall() {   # wall COMMAND...: prints elapsed seconds
    /usr/bin/time -f '%e' -o "$WORK/time" "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
    cat "$WORK/time"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.2f", n / s }'; }
audio_s() { find "$1" -name '*.wav' -printf '%s\n' | awk -v r=$RATE '{ s += ($1 - 44) / (4 * r) } END { printf "%.0f", s }'; }

fluid_loop() {   # fluid_loop OUTDIR FILE...
    local out=$1; shift
    for f in "$@"; do
        fluidsynth -ni -F "$out/$(basename "$(dirname "$f")")__$(basename "${f%.*}").wav" -r $RATE "$FONT" "$f" >/dev/null 2>&1
    done
}
export -f fluid_loop; export FONT RATE

# --- the sample ---------------------------------------------------------------
if [ -n "${LIST:-}" ]; then
    grep -v '^$' "$LIST" > "$WORK/list"
else
    find "$CORPUS" -type f \( -iname '*.mid' -o -iname '*.midi' -o -iname '*.kar' -o -iname '*.rmi' \) \
        | "$PYTHON" Benchmarks/fidelity.py select "$SAMPLE" "$MAX_SECONDS" > "$WORK/list"
fi
mapfile -t files < "$WORK/list"
n=${#files[@]}
for f in "${files[@]}"; do
    rel=${f#"$CORPUS"/}
    mkdir -p "$WORK/sample/$(dirname "$rel")"
    ln -s "$f" "$WORK/sample/$rel"
done
midi_kib=$(cat "${files[@]}" | wc -c | awk '{ printf "%.0f", $1 / 1024 }')

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); font: $FONT; $(fluidsynth --version 2>/dev/null | head -n1)"
echo "carillon: $CARILLON ($(stat -c %y "$CARILLON" | cut -d. -f1))"
if [ -n "${LIST:-}" ]; then how="listed in $LIST"; else how="at most $MAX_SECONDS s each, evenly spaced"; fi
echo "sample: $n files ($midi_kib KiB of MIDI) of $CORPUS, $how"

# Warm the page cache for the font and both programs.
"$CARILLON" render "${files[0]}" -o "$WORK/warm.wav" --soundfont "$FONT" -q --tail 0
fluidsynth -ni -F "$WORK/warm.wav" -r $RATE "$FONT" "${files[0]}" >/dev/null 2>&1

# --- the three runs, one after the other ------------------------------------------
mkdir -p "$WORK/f1" "$WORK/f2"
t_fluid=$(wall bash -c 'fluid_loop "$0" "$@"' "$WORK/f1" "${files[@]}")
a_fluid=$(audio_s "$WORK/f1"); rm -rf "$WORK/f1"
t_c=$(wall "$CARILLON" render "$WORK/sample" --output-dir "$WORK/c" --jobs "$JOBS" --soundfont "$FONT" -r $RATE -q \
      --manifest "$WORK/manifest.jsonl")
a_c=$(audio_s "$WORK/c"); ok=$(grep -c '"status":"ok"' "$WORK/manifest.jsonl" || true); rm -rf "$WORK/c"
cp "$WORK/manifest.jsonl" bench-out/render-corpus-manifest.jsonl
# Seconds Carillon spent per file (its own clock, summed over the workers).
r_c=$(grep -o '"render_seconds":[0-9.e+-]*' "$WORK/manifest.jsonl" | cut -d: -f2 | awk '{ s += $1 } END { printf "%.1f", s }')
t_fluidp=$(wall xargs -a "$WORK/list" -d '\n' -P "$JOBS" -I{} bash -c 'fluid_loop "$0" "$1"' "$WORK/f2" {})
a_fluidp=$(audio_s "$WORK/f2"); rm -rf "$WORK/f2"

echo
echo "## $n corpus files ($ok rendered ok by carillon)"
printf '%-44s %8s %8s %9s %9s %11s\n' command wall_s ratio files/s audio_s audio_s/s
printf '%-44s %8.2f %8s %9s %9s %11s\n' "fluidsynth -F loop (1 process a file)" "$t_fluid" 1.00 \
    "$(rate "$n" "$t_fluid")" "$a_fluid" "$(rate "$a_fluid" "$t_fluid")"
printf '%-44s %8.2f %8s %9s %9s %11s\n' "fluidsynth -F loop, xargs -P $JOBS" "$t_fluidp" "$(ratio "$t_fluidp" "$t_fluid")" \
    "$(rate "$n" "$t_fluidp")" "$a_fluidp" "$(rate "$a_fluidp" "$t_fluidp")"
printf '%-44s %8.2f %8s %9s %9s %11s\n' "carillon render DIR --jobs $JOBS --output-dir" "$t_c" "$(ratio "$t_c" "$t_fluid")" \
    "$(rate "$n" "$t_c")" "$a_c" "$(rate "$a_c" "$t_c")"
echo "carillon's manifest: render_seconds summed over the files $r_c s (manifest kept in bench-out/render-corpus-manifest.jsonl)"
echo "carillon files/s over the fluidsynth loop: $(ratio "$(rate "$n" "$t_c")" "$(rate "$n" "$t_fluid")")×;" \
     "over the xargs -P $JOBS loops: $(ratio "$(rate "$n" "$t_c")" "$(rate "$n" "$t_fluidp")")×"
echo "(audio_s: seconds of audio written; Carillon stops each file once its tail is below -80 dBFS, fluidsynth's -F goes on a few seconds past the last event)"
