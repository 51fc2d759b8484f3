#!/usr/bin/env bash
# Whole-process cost of summarising a big Standard MIDI File: `carillon inspect`
# (release build) against python + symusic loading the file and printing the same
# summary, side by side in one run. Not a test.
#   Benchmarks/inspect.sh [RUNS]     (default 5; medians reported)
# Everything it makes goes under bench-out/ (gitignored).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
out=bench-out
mkdir -p "$out"

echo "== building carillon and CarillonBench (release)" >&2
swift build -c release --product carillon 2>&1 | grep -E "error|Build" >&2 || true
swift build -c release --product CarillonBench 2>&1 | grep -E "error|Build" >&2 || true
bin=$(swift build -c release --show-bin-path)
for tool in carillon CarillonBench; do
    [ -x "$bin/$tool" ] || { echo "error: $bin/$tool was not built" >&2; exit 1; }
done

if [ ! -x "$out/venv/bin/python" ]; then
    echo "== creating $out/venv with symusic from PyPI" >&2
    python3 -m venv "$out/venv"
fi
"$out/venv/bin/python" -c "import symusic" 2>/dev/null || "$out/venv/bin/pip" install -q symusic >&2

# The parse benchmark's generator at 4.5 million notes: ~31 MB, ~9.4 million events.
file="$out/big.mid"
[ -f "$file" ] || "$bin/CarillonBench" generate-smf "$file" 4500000 >&2

# Runs a command RUNS times under /usr/bin/time -v; prints "<median seconds> <median peak KiB>".
measure() {
    local times=() rss=() log="$out/inspect-time.log"
    for _ in $(seq "$runs"); do
        /usr/bin/time -v "$@" > /dev/null 2> "$log"
        times+=("$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$log")")
        rss+=("$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$log")")
    done
    local t r
    t=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    r=$(printf '%s\n' "${rss[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    echo "$t $r"
}

echo "== $file: $(stat -c %s "$file") bytes; median of $runs runs each" >&2
"$bin/carillon" inspect "$file" | sed -n '4,5p' >&2
"$out/venv/bin/python" Benchmarks/inspect_peer.py "$file" >&2
read -r c_time c_rss < <(measure "$bin/carillon" inspect "$file")
read -r s_time s_rss < <(measure "$out/venv/bin/python" Benchmarks/inspect_peer.py "$file" second)
read -r k_time k_rss < <(measure "$out/venv/bin/python" Benchmarks/inspect_peer.py "$file" tick)
read -r e_time e_rss < <(runs=1 measure "$bin/carillon" inspect "$file" --events)

printf '\n%-34s %10s %14s %12s %12s\n' command "median s" "peak RSS MiB" "time ratio" "RSS ratio"
printf '%-34s %10.2f %14.1f %12.2f %12.2f\n' "carillon inspect" "$c_time" "$(bc -l <<<"$c_rss/1024")" "$(bc -l <<<"$c_time/$s_time")" "$(bc -l <<<"$c_rss/$s_rss")"
printf '%-34s %10.2f %14.1f %12.2f %12.2f\n' "python + symusic, seconds" "$s_time" "$(bc -l <<<"$s_rss/1024")" 1 1
printf '%-34s %10.2f %14.1f %12.2f %12.2f\n' "carillon inspect vs symusic ticks" "$c_time" "$(bc -l <<<"$c_rss/1024")" "$(bc -l <<<"$c_time/$k_time")" "$(bc -l <<<"$c_rss/$k_rss")"
printf '%-34s %10.2f %14.1f %12.2f %12.2f\n' "python + symusic, ticks" "$k_time" "$(bc -l <<<"$k_rss/1024")" 1 1
printf '%-34s %10.2f %14.1f %12s %12s\n' "carillon inspect --events (1 run)" "$e_time" "$(bc -l <<<"$e_rss/1024")" "-" "-"
echo
echo "ratios: carillon / symusic (target <= 1.00 for both); symusic in seconds prints what inspect prints,"
echo "symusic in ticks is its cheapest load (duration in ticks)"
echo "machine: $(nproc) cores, $(uname -m); $(swift --version 2>/dev/null | head -1)"
echo "symusic $("$out/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("symusic"))'), $("$out/venv/bin/python" --version)"
