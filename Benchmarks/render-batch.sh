#!/usr/bin/env bash
# Benchmark (not a test): batch rendering, `carillon render --jobs N --output-dir`
# against `fluidsynth -ni -F` run once per file, side by side in one run.
#
#  1. the 31 openttd-openmsx files with FluidR3_GM: wall time of one carillon
#     command (--jobs 1 and --jobs 2) against a fluidsynth loop (one process a
#     file, as a shell script would do it) and two such loops in parallel
#     (xargs -P 2); ratios carillon / fluidsynth loop.
#  2. a generated corpus of short files (default 2,000 files of 2 s of notes,
#     deterministic): files per second of carillon --jobs 2 against the
#     fluidsynth loop (over the first LOOP_FILES files: one process a file
#     costs ~1 s of font loading with FluidR3_GM) and against one fluidsynth
#     process given every file (the font loaded once; it writes all of them
#     into one audio file, so it is a lower bound no per-file tool can beat
#     on start-up cost).
#
#   Benchmarks/render-batch.sh
#   JOBS=2 CORPUS_FILES=2000 LOOP_FILES=100 FONT=... Benchmarks/render-batch.sh
#   BEFORE=/path/to/an/older/carillon Benchmarks/render-batch.sh   # its rows too, in the same run
set -euo pipefail
cd "$(dirname "$0")/.."

FONT=${FONT:-/usr/share/sounds/sf2/FluidR3_GM.sf2}
MIDI_DIR=${MIDI_DIR:-/usr/share/games/openttd/baseset/openmsx}
JOBS=${JOBS:-2}
CORPUS_FILES=${CORPUS_FILES:-2000}
LOOP_FILES=${LOOP_FILES:-100}
RATE=44100

swift build -c release --product carillon >&2
CARILLON=.build/release/carillon

mkdir -p bench-out
WORK=$(mktemp -d -p bench-out render-batch.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

wall() {   # wall COMMAND...: prints elapsed seconds
    /usr/bin/time -f '%e' -o "$WORK/time" "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
    cat "$WORK/time"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", n / s }'; }

fluid_loop() {   # fluid_loop OUTDIR FILE...
    local out=$1; shift
    for f in "$@"; do fluidsynth -ni -F "$out/$(basename "$f" .mid).wav" -r $RATE "$FONT" "$f" >/dev/null 2>&1; done
}
export -f fluid_loop; export FONT RATE

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); font: $FONT; $(fluidsynth --version 2>/dev/null | head -n1)"

# --- 1. the openmsx files -----------------------------------------------------
files=("$MIDI_DIR"/*.mid)
n=${#files[@]}
# Warm the page cache for the font and both programs.
"$CARILLON" render "${files[0]}" -o "$WORK/warm.wav" --soundfont "$FONT" -q --tail 0
fluidsynth -ni -F "$WORK/warm.wav" -r $RATE "$FONT" "${files[0]}" >/dev/null 2>&1

mkdir -p "$WORK/f1" "$WORK/f2"
t_fluid=$(wall bash -c 'fluid_loop "$0" "$@"' "$WORK/f1" "${files[@]}")
t_c1=$(wall "$CARILLON" render "${files[@]}" --output-dir "$WORK/c1" --jobs 1 --soundfont "$FONT" -r $RATE -q)
t_c2=$(wall "$CARILLON" render "${files[@]}" --output-dir "$WORK/c2" --jobs "$JOBS" --soundfont "$FONT" -r $RATE -q)
if [[ -n ${BEFORE:-} ]]; then
  t_b1=$(wall "$BEFORE" render "${files[@]}" --output-dir "$WORK/b1" --jobs 1 --soundfont "$FONT" -r $RATE -q)
  t_b2=$(wall "$BEFORE" render "${files[@]}" --output-dir "$WORK/b2" --jobs "$JOBS" --soundfont "$FONT" -r $RATE -q)
fi
printf '%s\n' "${files[@]}" > "$WORK/list"
t_fluidp=$(wall xargs -a "$WORK/list" -P "$JOBS" -I{} bash -c 'fluid_loop "$0" "$1"' "$WORK/f2" {})
audio=$(du -b "$WORK/c2" | cut -f1)
echo
echo "## $n openmsx files"
printf '%-40s %8s %8s\n' command wall_s ratio
printf '%-40s %8.2f %8s\n' "fluidsynth -F loop (1 process a file)" "$t_fluid" 1.00
printf '%-40s %8.2f %8s\n' "fluidsynth -F loop, xargs -P $JOBS" "$t_fluidp" "$(ratio "$t_fluidp" "$t_fluid")"
printf '%-40s %8.2f %8s\n' "carillon render --jobs 1" "$t_c1" "$(ratio "$t_c1" "$t_fluid")"
printf '%-40s %8.2f %8s\n' "carillon render --jobs $JOBS" "$t_c2" "$(ratio "$t_c2" "$t_fluid")"
if [[ -n ${BEFORE:-} ]]; then
  printf '%-40s %8.2f %8s\n' "BEFORE render --jobs 1" "$t_b1" "$(ratio "$t_b1" "$t_fluid")"
  printf '%-40s %8.2f %8s\n' "BEFORE render --jobs $JOBS" "$t_b2" "$(ratio "$t_b2" "$t_fluid")"
fi
echo "(carillon wrote $((audio / 1024 / 1024)) MiB of WAV; its outputs include each file's release tail)"
rm -rf "$WORK/c1" "$WORK/c2" "$WORK/b1" "$WORK/b2" "$WORK/f1" "$WORK/f2"

# --- 2. a generated corpus of short files ------------------------------------
python3 - "$WORK/corpus" "$CORPUS_FILES" <<'PY'
import os, random, sys
out, count = sys.argv[1], int(sys.argv[2])
rng = random.Random(20261123)           # deterministic corpus
def vlq(n):
    b = [n & 0x7F]; n >>= 7
    while n: b.append((n & 0x7F) | 0x80); n >>= 7
    return bytes(reversed(b))
for i in range(count):
    folder = os.path.join(out, f"{i // 500:02d}")
    os.makedirs(folder, exist_ok=True)
    ch = 9 if i % 5 == 0 else rng.randrange(9)
    ev = vlq(0) + bytes([0xC0 | ch, rng.randrange(128)])
    # 2 s at 120 bpm (480 PPQN): eight eighth notes, the last one a triad.
    for step in range(8):
        keys = [rng.randrange(36, 84)] if step < 7 else [60, 64, 67]
        for k, key in enumerate(keys):
            ev += vlq(0) + bytes([0x90 | ch, key, rng.randrange(60, 120)])
        for k, key in enumerate(keys):
            ev += vlq(240 if k == 0 else 0) + bytes([0x80 | ch, key, 0])
    ev += vlq(0) + b"\xff\x2f\x00"
    data = b"MThd" + (6).to_bytes(4, "big") + (0).to_bytes(2, "big") + (1).to_bytes(2, "big") + (480).to_bytes(2, "big")
    data += b"MTrk" + len(ev).to_bytes(4, "big") + ev
    with open(os.path.join(folder, f"s{i:05d}.mid"), "wb") as f:
        f.write(data)
PY
mapfile -t corpus < <(find "$WORK/corpus" -name '*.mid' | sort)
m=${#corpus[@]}
loop=("${corpus[@]:0:$LOOP_FILES}")
mkdir -p "$WORK/cf" "$WORK/cl"
t_cc=$(wall "$CARILLON" render "$WORK/corpus" --output-dir "$WORK/cc" --jobs "$JOBS" --soundfont "$FONT" -r $RATE -q \
       --manifest "$WORK/corpus.jsonl")
t_cl=$(wall bash -c 'fluid_loop "$0" "$@"' "$WORK/cl" "${loop[@]}")
t_cone=$(wall fluidsynth -ni -F "$WORK/cf/all.wav" -r $RATE "$FONT" "${corpus[@]}")
ok=$(grep -c '"status":"ok"' "$WORK/corpus.jsonl")
echo
echo "## generated corpus: $m files of 2 s ($ok rendered by carillon)"
printf '%-52s %7s %9s %9s\n' command files wall_s files/s
printf '%-52s %7d %9.2f %9s\n' "carillon render DIR --jobs $JOBS --output-dir" "$m" "$t_cc" "$(rate "$m" "$t_cc")"
printf '%-52s %7d %9.2f %9s\n' "fluidsynth -F loop (1 process a file)" "${#loop[@]}" "$t_cl" "$(rate "${#loop[@]}" "$t_cl")"
printf '%-52s %7d %9.2f %9s\n' "fluidsynth -F, one process, all files -> one file" "$m" "$t_cone" "$(rate "$m" "$t_cone")"
echo "carillon files/s over the fluidsynth loop: $(ratio "$(rate "$m" "$t_cc")" "$(rate "${#loop[@]}" "$t_cl")")×"
