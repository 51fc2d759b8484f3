#!/usr/bin/env bash
# Benchmark (not a test): `carillon render` against `fluidsynth -ni -F` on every
# openttd-openmsx MIDI file with FluidR3_GM, side by side in one run (the two
# runs of each file follow each other, so both see the same machine load and a
# warm page cache). Prints wall time and peak RSS per file and the median ratios.
#
#   Benchmarks/render.sh            # all files
#   FILES="a.mid b.mid" Benchmarks/render.sh
#   SCRATCH=.build Benchmarks/render.sh   # build directory (default .build)
#   FONT=/usr/share/sounds/sf3/MuseScore_General_Lite.sf3 Benchmarks/render.sh   # another font (SF3 too)
#   CARILLON=.build/debug/carillon Benchmarks/render.sh   # a binary already built
set -euo pipefail
cd "$(dirname "$0")/.."

SCRATCH=${SCRATCH:-.build}
FONT=${FONT:-/usr/share/sounds/sf2/FluidR3_GM.sf2}
MIDI_DIR=${MIDI_DIR:-/usr/share/games/openttd/baseset/openmsx}
RATE=44100

# Release builds link the Swift runtime and Foundation statically (Package.swift).
# CARILLON=path runs that binary instead (no build).
if [ -z "${CARILLON:-}" ]; then
    swift build -c release --product carillon --scratch-path "$SCRATCH" >&2
    CARILLON="$SCRATCH/release/carillon"
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FILES=${FILES:-$(ls "$MIDI_DIR"/*.mid)}

# Warm the page cache for the font and both programs.
"$CARILLON" render "$(echo "$FILES" | head -n1)" -o "$WORK/warm.wav" --soundfont "$FONT" -r $RATE -q --tail 0
fluidsynth -ni -F "$WORK/warm.wav" -r $RATE "$FONT" "$(echo "$FILES" | head -n1)" >/dev/null 2>&1

measure() {   # measure OUTFILE COMMAND...: prints "seconds kilobytes"
    local out=$1; shift
    /usr/bin/time -f '%e %M' -o "$out" "$@" >/dev/null 2>&1
    cat "$out"
}

printf '%-28s %9s %9s %6s %10s %10s %6s\n' file carillon_s fluid_s time× carillon_MB fluid_MB mem×
: > "$WORK/ratios"
for f in $FILES; do
    name=$(basename "$f" .mid)
    read -r ct cm < <(measure "$WORK/t1" "$CARILLON" render "$f" -o "$WORK/c.wav" --soundfont "$FONT" -r $RATE -q)
    read -r ft fm < <(measure "$WORK/t2" fluidsynth -ni -F "$WORK/f.wav" -r $RATE "$FONT" "$f")
    awk -v n="$name" -v ct="$ct" -v ft="$ft" -v cm="$cm" -v fm="$fm" 'BEGIN {
        printf "%-28s %9.2f %9.2f %6.2f %10.1f %10.1f %6.3f\n", n, ct, ft, ct/ft, cm/1024, fm/1024, cm/fm }'
    awk -v ct="$ct" -v ft="$ft" -v cm="$cm" -v fm="$fm" 'BEGIN { print ct/ft, cm/fm }' >> "$WORK/ratios"
    rm -f "$WORK/c.wav" "$WORK/f.wav"
done

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo
echo "files: $(wc -l < "$WORK/ratios")   font: $FONT"
echo "median wall-time ratio (carillon / fluidsynth): $(cut -d' ' -f1 "$WORK/ratios" | median)"
echo "median peak-RSS ratio  (carillon / fluidsynth): $(cut -d' ' -f2 "$WORK/ratios" | median)"
