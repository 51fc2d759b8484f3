#!/usr/bin/env bash
# Benchmark (not a test): the peak resident memory (`/usr/bin/time -f %M`) of `carillon render`,
# one synth (--threads 1), on every openmsx file with FluidR3_GM, float WAV. With BEFORE (another
# carillon binary) each file is rendered by both, one after the other, and the WAVs and manifest
# lines (render_seconds aside) must be byte-equal. Prints "file KiB [before_KiB same]" per file,
# then the median and max of each column and the load average; exit 1 on any difference.
#
#   CARILLON=.build-release/release/carillon Benchmarks/render-memory.sh
#   CARILLON=new/carillon BEFORE=old/carillon Benchmarks/render-memory.sh
#   FILES="a.mid b.mid" ROUNDS=3 CARILLON=… Benchmarks/render-memory.sh   # each file 3 times, the median
set -euo pipefail
cd "$(dirname "$0")/.."

FONT=${FONT:-/usr/share/sounds/sf2/FluidR3_GM.sf2}
MIDI_DIR=${MIDI_DIR:-/usr/share/games/openttd/baseset/openmsx}
ROUNDS=${ROUNDS:-1}
: "${CARILLON:?CARILLON=path/to/a/release/carillon (swift build -c release --product carillon)}"
BEFORE=${BEFORE:-}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FILES=${FILES:-$(ls "$MIDI_DIR"/*.mid)}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }

peak() {   # peak BINARY FILE TAG: the median peak KiB of ROUNDS renders; leaves TAG.wav and TAG.jsonl
    local bin=$1 f=$2 tag=$3 r
    for r in $(seq "$ROUNDS"); do
        rm -f "$WORK/$tag.jsonl"
        /usr/bin/time -f %M -o "$WORK/$tag.time" "$bin" render "$f" -o "$WORK/$tag.wav" --soundfont "$FONT" \
            --threads 1 --bits 32 --manifest "$WORK/$tag.jsonl" -q
        tail -n1 "$WORK/$tag.time"
    done | median
}

same() {   # same A B: yes when the WAVs and the manifest lines (render_seconds aside, paths renamed) match
    cmp -s "$WORK/$1.wav" "$WORK/$2.wav" || { echo no; return; }
    local a b
    a=$(sed -E -e 's/"render_seconds":[0-9.e+-]+//' -e "s#$WORK/$1#OUT#g" "$WORK/$1.jsonl")
    b=$(sed -E -e 's/"render_seconds":[0-9.e+-]+//' -e "s#$WORK/$2#OUT#g" "$WORK/$2.jsonl")
    [ "$a" = "$b" ] && echo yes || echo manifest
}

: > "$WORK/lines"
for f in $FILES; do
    n=$(basename "$f" .mid)
    line="$n $(peak "$CARILLON" "$f" after)"
    if [ -n "$BEFORE" ]; then line="$line $(peak "$BEFORE" "$f" before) $(same after before)"; fi
    echo "$line" | tee -a "$WORK/lines" >&2
done
stat() { sort -n | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2;
                                           printf "median %.1f MiB, max %.1f MiB", m / 1024, a[NR] / 1024 }'; }
echo
sort "$WORK/lines"
echo
echo "files: $(wc -l < "$WORK/lines")  rounds: $ROUNDS  font: $FONT  load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$CARILLON: $(awk '{ print $2 }' "$WORK/lines" | stat)"
if [ -n "$BEFORE" ]; then
    echo "$BEFORE: $(awk '{ print $3 }' "$WORK/lines" | stat)"
    echo "byte-equal (WAV and manifest): $(grep -c ' yes$' "$WORK/lines" || true) of $(wc -l < "$WORK/lines")"
    grep -qv ' yes$' "$WORK/lines" && exit 1
fi
exit 0
