#!/usr/bin/env bash
# Benchmark (not a test): one long file, openttd-openmsx `linns_basket.mid` with
# FluidR3_GM, rendered by `carillon render --threads 1`, `--threads 2` and
# `fluidsynth -ni -F`, side by side in one run: each round runs the three in turn
# (same machine load, warm page cache); the median of ROUNDS rounds is reported
# with wall time and peak RSS, and the ratios to fluidsynth.
#
# Each round also runs two `fluidsynth -ni -F` side by side: what the machine's
# cores give two whole renders at once (shared caches and memory bandwidth
# slow each down). Half the pair's wall time is the bound for one file split
# over two synths: the same work, on the same two cores.
#
#   Benchmarks/render-parallel.sh            # 3 rounds
#   ROUNDS=5 FILE=/path/song.mid Benchmarks/render-parallel.sh
#   THREADS="1 2 4" Benchmarks/render-parallel.sh
#   BEFORE=/path/to/an/older/carillon Benchmarks/render-parallel.sh   # its rows too (before-1, before-2, …)
set -euo pipefail
cd "$(dirname "$0")/.."

SCRATCH=${SCRATCH:-.build}
FONT=${FONT:-/usr/share/sounds/sf2/FluidR3_GM.sf2}
FILE=${FILE:-/usr/share/games/openttd/baseset/openmsx/linns_basket.mid}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-1 2}
RATE=44100

swift build -c release --product carillon --scratch-path "$SCRATCH" >&2
CARILLON="$SCRATCH/release/carillon"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

measure() {   # measure COMMAND...: prints "seconds kilobytes"
    /usr/bin/time -f '%e %M' -o "$WORK/time" "$@" >/dev/null 2>&1
    cat "$WORK/time"
}

# Warm the page cache for the font, the file and both programs.
"$CARILLON" render "$FILE" -o "$WORK/warm.wav" --soundfont "$FONT" -r $RATE -q --threads 1 >/dev/null
fluidsynth -ni -F "$WORK/warm.wav" -r $RATE "$FONT" "$FILE" >/dev/null 2>&1
read -r _ base < <(measure "$CARILLON" inspect "$FILE")

for r in $(seq "$ROUNDS"); do
    for t in $THREADS; do
        echo "carillon-$t $(measure "$CARILLON" render "$FILE" -o "$WORK/c.wav" --soundfont "$FONT" -r $RATE -q --threads "$t")" >> "$WORK/runs"
        if [[ -n ${BEFORE:-} ]]; then
            echo "before-$t $(measure "$BEFORE" render "$FILE" -o "$WORK/b.wav" --soundfont "$FONT" -r $RATE -q --threads "$t")" >> "$WORK/runs"
        fi
    done
    echo "fluidsynth $(measure fluidsynth -ni -F "$WORK/f.wav" -r $RATE "$FONT" "$FILE")" >> "$WORK/runs"
    echo "fluidsynth-pair $(measure sh -c 'fluidsynth -ni -F "$1/p1.wav" -r "$2" "$3" "$4" >/dev/null 2>&1 &
        fluidsynth -ni -F "$1/p2.wav" -r "$2" "$3" "$4" >/dev/null 2>&1; wait' - "$WORK" $RATE "$FONT" "$FILE")" >> "$WORK/runs"
done

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
ft=$(awk '$1 == "fluidsynth" { print $2 }' "$WORK/runs" | median)
fm=$(awk '$1 == "fluidsynth" { print $3 }' "$WORK/runs" | median)
echo "file: $FILE   font: $FONT   rounds: $ROUNDS   cores: $(nproc)"
printf '%-14s %9s %9s %9s %8s\n' program wall_s time× peak_MiB mem×
for p in $(for t in $THREADS; do echo "carillon-$t"; [[ -n ${BEFORE:-} ]] && echo "before-$t"; done) fluidsynth; do
    t=$(awk -v p="$p" '$1 == p { print $2 }' "$WORK/runs" | median)
    m=$(awk -v p="$p" '$1 == p { print $3 }' "$WORK/runs" | median)
    awk -v p="$p" -v t="$t" -v m="$m" -v ft="$ft" -v fm="$fm" 'BEGIN {
        printf "%-14s %9.2f %9.3f %9.1f %8.3f\n", p, t, t / ft, m / 1024, m / fm }'
done
pair=$(awk '$1 == "fluidsynth-pair" { print $2 }' "$WORK/runs" | median)
awk -v p="$pair" -v ft="$ft" 'BEGIN {
    printf "two fluidsynth side by side: %.2f s (%.2f× one alone); bound for one file on two synths: %.3f×\n", p, p / ft, p / 2 / ft }'
awk -v b="$base" 'BEGIN { printf "carillon inspect (base memory): %.1f MiB\n", b / 1024 }'
