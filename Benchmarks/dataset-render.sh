#!/usr/bin/env bash
# Benchmark (not a test): rendering a corpus of real songs for a dataset, one
# `carillon render DIR --labels --stems --jobs N` command against the usual
# Python paths, side by side in one run, same SoundFont, same rate, same
# files, the same N workers each (Benchmarks/dataset_render.py):
#   - pretty_midi: PrettyMIDI(f).fluidsynth(fs, sf2_path) (pyfluidsynth) and
#     soundfile.write, in a multiprocessing.Pool(N);
#   - midi2audio: FluidSynth(font, rate).midi_to_audio(f, wav) (the fluidsynth
#     CLI once per file), in a multiprocessing.Pool(N).
# Each timed with /usr/bin/time -v: wall time (files per second) and maximum
# resident set size. Carillon's workers are threads of one process, so its
# peak is the whole batch's; a pool's figure is its largest process (one
# worker: the batch holds N of them and the parent).
#
# The sample: the SAMPLE (default 100) shortest files of CORPUS_DIR by
# pretty_midi's end time, of those pretty_midi reads (so every tool gets the
# same files). The corpus is not in the repository: see Benchmarks/README.md.
#
#   Benchmarks/dataset-render.sh CORPUS_DIR
#   CARILLON=path JOBS=2 SAMPLE=100 FONT=... RATE=44100 Benchmarks/dataset-render.sh CORPUS_DIR
#
# CARILLON unset: builds `swift build -c release --product carillon`. The
# Python packages go into bench-out/dataset-venv from PyPI (made if missing).
# Outputs go under bench-out/ and are removed at the end.
set -euo pipefail
CORPUS=$(realpath "$1")
cd "$(dirname "$0")/.."

. Benchmarks/dataset-common.sh
RATE=${RATE:-44100}
dataset_setup "import pretty_midi, fluidsynth, soundfile, midi2audio" "pretty_midi pyfluidsynth soundfile midi2audio"

mkdir -p bench-out
WORK=$(mktemp -d -p bench-out dataset-render.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

timed() {   # timed NAME COMMAND...: /usr/bin/time -v into $WORK/NAME.time, output into $WORK/NAME.log
    local name=$1; shift
    /usr/bin/time -v -o "$WORK/$name.time" "$@" > "$WORK/$name.log" 2>&1 || { echo "failed: $*" >&2; tail "$WORK/$name.log" >&2; exit 1; }
}
wall() { awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$WORK/$1.time"; }
rss_mib() { awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$WORK/$1.time"; }
cpu() { awk -F': ' '/Percent of CPU/ { print $2 }' "$WORK/$1.time"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

dataset_sample "$CORPUS" "$WORK/list"
mapfile -t files < "$WORK/list"
n=${#files[@]}
mkdir -p "$WORK/sample"
for i in "${!files[@]}"; do ln -s "${files[$i]}" "$WORK/sample/$(printf %04d "$i")_$(basename "${files[$i]}")"; done
audio_min=$("$PY" -c '
import sys, warnings; warnings.filterwarnings("ignore"); import pretty_midi
print(round(sum(pretty_midi.PrettyMIDI(p).get_end_time() for p in open(sys.argv[1]).read().split()) / 60))' "$WORK/list")

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); font: $FONT; rate $RATE; jobs $JOBS"
echo "carillon: $CARILLON ($(stat -c %y "$CARILLON" | cut -d. -f1)); $(fluidsynth --version 2>/dev/null | head -n1)"
echo "python: $("$PY" -c 'import sys, importlib.metadata as m; print(sys.version.split()[0], *(p + " " + m.version(p) for p in ("pretty_midi", "pyfluidsynth", "soundfile", "midi2audio", "numpy")))')"
echo "sample: $n files of $CORPUS, the shortest by pretty_midi ($audio_min min of music)"

# Warm the page cache for the font, the programs and the Python modules.
"$CARILLON" render "${files[0]}" -o "$WORK/warm.wav" --soundfont "$FONT" -q
mkdir -p "$WORK/warm"; head -n 2 "$WORK/list" > "$WORK/warm.list"
"$PY" Benchmarks/dataset_render.py pretty_midi "$FONT" "$RATE" 1 "$WORK/warm" "$WORK/warm.list" >/dev/null
rm -rf "$WORK/warm" "$WORK/warm.wav"

# --- the three runs, one after the other ------------------------------------
timed carillon "$CARILLON" render "$WORK/sample" --output-dir "$WORK/c" --labels --stems "$WORK/cs" \
    --jobs "$JOBS" --soundfont "$FONT" -r "$RATE" -q --manifest "$WORK/manifest.jsonl"
ok_c=$(grep -c '"status":"ok"' "$WORK/manifest.jsonl" || true)
gib_c=$(du -sm "$WORK/c" "$WORK/cs" | awk '{ s += $1 } END { printf "%.1f", s / 1024 }')
rm -rf "$WORK/c" "$WORK/cs"
mkdir -p "$WORK/pm" "$WORK/m2a"
timed pretty_midi "$PY" Benchmarks/dataset_render.py pretty_midi "$FONT" "$RATE" "$JOBS" "$WORK/pm" "$WORK/list"
gib_pm=$(du -sm "$WORK/pm" | awk '{ printf "%.1f", $1 / 1024 }'); rm -rf "$WORK/pm"
timed midi2audio "$PY" Benchmarks/dataset_render.py midi2audio "$FONT" "$RATE" "$JOBS" "$WORK/m2a" "$WORK/list"
gib_m2a=$(du -sm "$WORK/m2a" | awk '{ printf "%.1f", $1 / 1024 }'); rm -rf "$WORK/m2a"

t_c=$(wall carillon); t_pm=$(wall pretty_midi); t_m=$(wall midi2audio)
echo
echo "## $n files, $JOBS workers each"
printf '%-58s %8s %8s %9s %8s %5s %s\n' command wall_s files/s peak_MiB out_GiB cpu result
printf '%-58s %8.1f %8.2f %9s %8s %5s %s\n' "carillon render DIR --labels --stems --jobs $JOBS" "$t_c" "$(ratio "$n" "$t_c")" \
    "$(rss_mib carillon)" "$gib_c" "$(cpu carillon)" "$ok_c ok"
printf '%-58s %8.1f %8.2f %9s %8s %5s %s\n' "pretty_midi .fluidsynth() + soundfile, Pool($JOBS)" "$t_pm" "$(ratio "$n" "$t_pm")" \
    "$(rss_mib pretty_midi)" "$gib_pm" "$(cpu pretty_midi)" "$(tail -n1 "$WORK/pretty_midi.log")"
printf '%-58s %8.1f %8.2f %9s %8s %5s %s\n' "midi2audio (fluidsynth CLI), Pool($JOBS)" "$t_m" "$(ratio "$n" "$t_m")" \
    "$(rss_mib midi2audio)" "$gib_m2a" "$(cpu midi2audio)" "$(tail -n1 "$WORK/midi2audio.log")"
echo "carillon files/s over pretty_midi's: $(ratio "$t_pm" "$t_c")×, peak memory $(ratio "$(rss_mib carillon)" "$(rss_mib pretty_midi)")×;" \
     "over midi2audio's: $(ratio "$t_m" "$t_c")×, peak memory $(ratio "$(rss_mib carillon)" "$(rss_mib midi2audio)")×"
echo "(carillon writes the stereo mix, a stereo stem per channel and three label files per song; pretty_midi a mono mix" \
     "and no labels; midi2audio a stereo mix. Peak: carillon's whole process; a pool's largest process.)"
