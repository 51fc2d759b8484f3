#!/usr/bin/env bash
# Benchmark (not a test): what an LV2 plugin costs in Carillon — an effect as an
# insert (`CarillonBench insert-cost`, as the mixer calls it), an instrument on a
# channel (`instrument-cost`, as the renderer calls it: controls read, one run into
# the strip's buffers) — against lilv's own lv2bench timing the plugin's run()
# alone, side by side in each round: same block size, same number of frames,
# silence in and no notes (as lv2bench runs it). Median of ROUNDS rounds; the
# ratio above 1 is the host's overhead.
#
#   Benchmarks/lv2.sh              # effects mda Delay, Overdrive, Stereo; instruments mda EPiano, Piano, DX10; 5 rounds
#   URIS="http://drobilla.net/plugins/mda/Delay" INSTRUMENTS= BLOCK=256 ROUNDS=9 Benchmarks/lv2.sh
set -euo pipefail
cd "$(dirname "$0")/.."

SCRATCH=${SCRATCH:-.build}
ROUNDS=${ROUNDS:-5}
BLOCK=${BLOCK:-512}
FRAMES=${FRAMES:-48000000}
URIS=${URIS-http://drobilla.net/plugins/mda/Delay http://drobilla.net/plugins/mda/Overdrive http://drobilla.net/plugins/mda/Stereo}
INSTRUMENTS=${INSTRUMENTS-http://drobilla.net/plugins/mda/EPiano http://drobilla.net/plugins/mda/Piano http://drobilla.net/plugins/mda/DX10}

swift build -c release --product CarillonBench --scratch-path "$SCRATCH" >&2
BENCH="$SCRATCH/release/CarillonBench"

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }

printf '%-45s %-10s %8s %12s %12s %8s\n' plugin as block lv2bench_s carillon_s ratio
for entry in $(for u in $URIS; do echo "insert-cost:$u"; done; for u in $INSTRUMENTS; do echo "instrument-cost:$u"; done); do
    kind=${entry%%:*} uri=${entry#*:}
    peer=() ours=()
    for _ in $(seq "$ROUNDS"); do
        peer+=("$(lv2bench -b "$BLOCK" -n "$FRAMES" "$uri" 2>/dev/null | awk -v u="$uri" '$2 == u { print $1 }')")
        ours+=("$("$BENCH" "$kind" "$uri" "$BLOCK" "$FRAMES" | awk '{ print $1 }')")
    done
    p=$(printf '%s\n' "${peer[@]}" | median)
    o=$(printf '%s\n' "${ours[@]}" | median)
    printf '%-45s %-10s %8d %12.6f %12.6f %8.3f\n' "${uri##*/plugins/}" "${kind%-cost}" "$BLOCK" "$p" "$o" \
        "$(awk -v o="$o" -v p="$p" 'BEGIN { print o / p }')"
done
