#!/usr/bin/env bash
# What --labels costs a batch render: the openmsx corpus (31 files) with --jobs 2,
# with and without --labels, interleaved, ROUNDS times each; prints the times and
# the ratio labels/plain per round. The audio is the same either way (checked).
#   Benchmarks/labels-cost.sh [CARILLON] [ROUNDS]
set -euo pipefail
carillon=${1:-.build/release/carillon}
rounds=${2:-3}
corpus=/usr/share/games/openttd/baseset/openmsx
font=/usr/share/sounds/sf2/TimGM6mb.sf2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
seconds() { local s e; s=$(date +%s.%N); "$@"; e=$(date +%s.%N); echo "$e - $s" | bc; }
for r in $(seq "$rounds"); do
  plain=$(seconds "$carillon" render "$corpus" --output-dir "$out/plain" --jobs 2 --soundfont "$font" -q)
  labels=$(seconds "$carillon" render "$corpus" --output-dir "$out/labels" --jobs 2 --soundfont "$font" -q --labels)
  for f in "$out"/plain/*.wav; do cmp -s "$f" "$out/labels/${f##*/}" || { echo "audio differs: ${f##*/}"; exit 1; }; done
  printf 'round %d: plain %.2f s, --labels %.2f s, ratio %.3f\n' "$r" "$plain" "$labels" "$(echo "$labels / $plain" | bc -l)"
  rm -rf "$out/plain" "$out/labels"
done
