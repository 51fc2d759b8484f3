#!/usr/bin/env bash
# `live` loads what the rig plays (issue 41): memory and the wait of a first program change.
#
# On a jackd of its own (dummy driver, a unique JACK_DEFAULT_SERVER, 48 kHz, 256 frames),
# carillon-jack-probe plays 20 program changes on channel 1 to 20 distinct FluidR3 presets
# the stage-piano rig does not name, 1.5 s apart, each followed 0.5 s later by a note, into
# `carillon live -a jack --mapping mappings/stage-piano.yaml --soundfont FluidR3_GM.sf2`.
# For each run it prints VmRSS before the first program change ("start") and after the last
# ("after"), VmHWM, and what live's log says of each preset it loaded (its wait: from the
# program change reaching the render thread to its samples in memory; the render thread sends
# the program change at the next block's start, at most 5.3 ms later). JACK's process callback
# runs under rtcheck.c (LD_PRELOAD): heap calls and locks in it are counted.
# Runs: live (presets on demand, the default), live --whole-font, `fluidsynth` itself with the font.
#
#   Benchmarks/live-presets.sh [CARILLON] [PROBE]
# CARILLON: default .build-release/release/carillon (swift build -c release --product carillon
# --scratch-path .build-release); PROBE: default .build/debug/carillon-jack-probe.
set -uo pipefail
cd "$(dirname "$0")/.."
carillon=${1:-.build-release/release/carillon}
probe=${2:-.build/debug/carillon-jack-probe}
font=/usr/share/sounds/sf2/FluidR3_GM.sf2
rig=mappings/stage-piano.yaml
for tool in "$carillon" "$probe"; do [[ -x $tool ]] || { echo "missing $tool (build it first)"; exit 1; }; done
out=$(mktemp -d "${TMPDIR:-/tmp}/carillon-live-presets.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
}
trap cleanup EXIT

export JACK_DEFAULT_SERVER=carillon-presets-$$-$RANDOM
jackd -n "$JACK_DEFAULT_SERVER" -d dummy -r 48000 -p 256 >"$out/jackd.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do jack_lsp system:playback_1 2>/dev/null | grep -q playback_1 && break; sleep 0.1; done
jack_lsp system:playback_1 2>/dev/null | grep -q playback_1 || { echo "jackd did not start: $(cat "$out/jackd.log")"; exit 1; }
gcc -shared -fPIC -O2 -o "$out/librtcheck.so" Tests/ALSAIntegration/rtcheck.c -ldl -lasound || { echo "rtcheck: build failed"; exit 1; }

# 20 presets of FluidR3's bank 0 the rig (0, 33, 48) does not name.
programs=(4 8 11 16 19 22 24 26 30 40 42 46 52 56 61 65 71 73 80 89)
python3 - "${programs[@]}" >"$out/changes.csv" <<'PY'
import sys
programs = [int(p) for p in sys.argv[1:]]
tps = 960  # 480 ticks a beat at 120 bpm
rows = [(0, "Tempo", "500000")]
for i, p in enumerate(programs):
    t = int((1.0 + 1.5 * i) * tps)
    rows += [(t, "Program_c", f"0, {p}"), (t + tps // 2, "Note_on_c", "0, 60, 100"), (t + tps // 2 + tps * 3 // 10, "Note_off_c", "0, 60, 0")]
end = rows[-1][0] + tps
print("0, 0, Header, 0, 1, 480")
print("1, 0, Start_track")
for t, kind, rest in rows:
    print(f"1, {t}, {kind}, {rest}")
print(f"1, {end}, End_track")
print("0, 0, End_of_file")
PY
csvmidi "$out/changes.csv" "$out/changes.mid" || { echo "csvmidi failed"; exit 1; }

rss() { awk '/^VmRSS:/ {r=$2} /^VmHWM:/ {h=$2} END {printf "VmRSS %.0f MiB, VmHWM %.0f MiB", r/1024, h/1024}' "/proc/$1/status"; }

# One live run: $1 a label, $2 the font, the rest live's extra flags.
run_live() {
  local label=$1 runfont=$2; shift 2
  "$probe" play "$out/changes.mid" --record "$out/$label.wav" --from carillon:out_1 --from carillon:out_2 \
    --lead 3 --tail 2 --wait 60 >"$out/$label.probe" 2>&1 &
  local probe_pid=$!
  pids+=($probe_pid)
  for _ in $(seq 100); do jack_lsp carillon-jack-probe:midi_out 2>/dev/null | grep -q midi_out && break; sleep 0.1; done
  LD_PRELOAD=$out/librtcheck.so "$carillon" live -a jack --jack-midi-connect carillon-jack-probe:midi_out \
    --mapping "$rig" --soundfont "$runfont" --duration 90 "$@" >"$out/$label.out" 2>"$out/$label.err" &
  local live_pid=$!
  pids+=($live_pid)
  # The probe starts its clock when live connects; its first program change is 4 s later.
  for _ in $(seq 300); do jack_lsp -c carillon-jack-probe:midi_out 2>/dev/null | grep -q "carillon:" && break; sleep 0.1; done
  sleep 2
  local start; start=$(rss "$live_pid")
  wait "$probe_pid"
  local after; after=$(rss "$live_pid")
  kill -INT "$live_pid"; wait "$live_pid"
  echo "$label: start: $start; after 20 program changes: $after"
  grep -ho "preset [0-9]*:[0-9]* .* loaded, [0-9]* ms after its program change" "$out/$label.out" "$out/$label.err" \
    | awk '{ print $(NF-5) }' | sort -n >"$out/$label.waits"
  if [[ -s $out/$label.waits ]]; then
    awk -v l="$label" '{ v[NR]=$1; sum+=$1 } END { printf "%s: %d presets loaded on demand, wait mean %.0f ms, median %d ms, max %d ms (%s)\n",
      l, NR, sum/NR, v[int((NR+1)/2)], v[NR], "all: see " FILENAME }' "$out/$label.waits"
  fi
  grep '^rtcheck:' "$out/$label.err" | tail -1 | sed "s/^/$label: /"
  grep 'jack-probe:' "$out/$label.probe" | sed "s/^/$label: /"
}

uptime
# What live costs without FluidR3: the same session on TimGM6mb (6 MB), loaded whole.
run_live baseline-timgm6mb /usr/share/sounds/sf2/TimGM6mb.sf2 --whole-font
run_live on-demand "$font"
run_live whole-font "$font" --whole-font

# fluidsynth itself: the font loaded whole, on the same server.
fluidsynth -n -a jack -r 48000 -g 0.2 "$font" < <(sleep 60) >"$out/fluidsynth.out" 2>&1 &
fs_pid=$!
pids+=($fs_pid)
sleep 8
echo "fluidsynth: $(rss "$fs_pid")"
kill "$fs_pid" 2>/dev/null
uptime
echo "logs in $out"
