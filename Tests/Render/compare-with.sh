#!/usr/bin/env bash
# Render bytes unchanged: every file a render writes (audio, stems, labels,
# stems reports), compared with cmp between BASE_BINARY (a build of an earlier
# commit) and this build, on 30 real files (the first 30 openmsx songs) in six
# runs: --threads 1, --threads 2, --stems-by program, --labels, FLAC, and a
# batch with --jobs 2. Each binary runs in a folder of its own with the same
# relative paths, so paths written into stems reports are equal too.
# Manifests are not written (their render_seconds differ run to run).
#
#   Tests/Render/compare-with.sh BASE_BINARY [NEW_BINARY]   (default .build/debug/carillon)
#   RATE=44100 MAX=0 FONT=/usr/share/sounds/sf2/FluidR3_GM.sf2 Tests/Render/compare-with.sh ../base/carillon
#
# By default each song is cut at MAX=20 s (--max-duration; 0: whole songs) at
# RATE=11025 Hz, so the 12 debug-build runs take minutes, not an hour.
#
# COUNT=31 takes every song; EXCLUDE=REGEX leaves out the songs whose names
# match (a song a change is meant to render differently, such as tttheme2.mid's
# 19 s of dead air). ONLY=REGEX runs only the runs whose names match
# (threads1|labels …).
#
# Prints the files compared per run and exits non-zero on the first difference.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BASE_BINARY [NEW_BINARY]" >&2; exit 2; }
base=$(realpath "$1")
new=$(realpath "${2:-$(dirname "$0")/../../.build/debug/carillon}")
[ -x "$base" ] || { echo "$0: $1: not an executable" >&2; exit 2; }
[ -x "$new" ] || { echo "$0: ${2:-.build/debug/carillon}: not an executable (swift build first)" >&2; exit 2; }
font=${FONT:-/usr/share/sounds/sf2/TimGM6mb.sf2}
rate=${RATE:-11025}
max=${MAX:-20}
cut=(); [ "$max" != 0 ] && cut=(--max-duration "$max")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
for f in $(ls /usr/share/games/openttd/baseset/openmsx/*.mid | sort | head -"${COUNT:-30}"); do
  [ -n "${EXCLUDE:-}" ] && [[ $(basename "$f") =~ $EXCLUDE ]] && continue
  cp "$f" "$work/corpus/"
done

runs=(
  "threads1|--threads 1"
  "threads2|--threads 2"
  "stems-by-program|--stems stems --stems-by program"
  "labels|--labels"
  "flac|--format flac"
  "jobs2|--jobs 2"
)
status=0
for run in "${runs[@]}"; do
  name=${run%%|*}; flags=${run#*|}
  [ -n "${ONLY:-}" ] && ! [[ $name =~ $ONLY ]] && continue
  start=$SECONDS
  for side in base new; do
    bin=$base; [ $side = new ] && bin=$new
    mkdir -p "$work/$side/$name"
    # shellcheck disable=SC2086
    (cd "$work/$side/$name" && "$bin" render ../../corpus --output-dir out -r "$rate" "${cut[@]}" --soundfont "$font" -q $flags 2>/dev/null)
  done
  count=$(cd "$work/base/$name" && find . -type f | wc -l)
  if diff -r -q "$work/base/$name" "$work/new/$name" >"$work/diff.txt"; then
    echo "$name ($flags): $count files cmp-equal ($((SECONDS - start)) s)"
  else
    echo "$name ($flags): DIFFERENT"; head -5 "$work/diff.txt"; status=1
  fi
done
exit $status
