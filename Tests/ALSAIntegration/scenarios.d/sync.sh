# MIDI clock (issue 31), against the probe's clock listener and clock master (kernel arrival stamps):
#  1. `carillon play --clock-out` of a 120 bpm file (4 s) at 1024-frame periods: Start first, the
#     clocks at 20.833 ms (±0.1 ms mean) with a standard deviation ≤ 0.5 ms in every run, Stop at
#     the end (after 4 s × 48 clocks ±2); with --start 1.01: Song Position 9 (the next sixteenth)
#     and Continue instead of Start.
#  2. `carillon play --sync clock=clock-master --clock-out LISTENER`: the master sends Start,
#     8 beats at 120 bpm (±1 ms jitter a clock), Stop, Song Position 32, Continue, 8 beats at
#     140 bpm, Stop; Carillon's own clock out (what it follows, re-sent on its audio clock)
#     shows Start, Stop, SPP 32, Continue, Stop, and runs at 120 and 140 bpm (±1 %). The file is
#     a drum pattern that does not repeat within 16 beats; the loopback capture follows an offline
#     render of it at the master's tempo (120, then 140 from beat 8): envelope correlation ≥ 0.95
#     before the Stop and after the Continue, each aligned on its own, and the second part comes
#     4.6 s after the first (8 beats at 120 bpm, then the master's 0.6 s stop) ±50 ms: Start and
#     Continue each play from the frame their first clock was stamped at (one period after its
#     arrival, within a FluidSynth block, 3 ms), the clock gate holds a note at most to its own
#     clock's stamp (the master's ±1 ms jitter), and the envelopes' 10 ms grid adds ±10 to each
#     part's lag: ±50 leaves room for the VM's scheduling (it was ±70 while Start and Continue
#     took effect at the next block, up to a 46 ms period late; one CI run then: 4660 ms). The part
#     after the Continue is held against a render of beats 8–15 alone: in the capture nothing
#     rings into beat 8 (the Stop ended beat 7's tom), in a render through beat 7 it does (that
#     tail alone held one CI run at 0.947; against beats 8–15 alone the same capture reads 0.972).
#  3. The clock gate: a master that stops mid-beat (Start, 4 beats and 12 clocks at 120 bpm, its
#     Stop 0.4 s after that last clock) under `play --sync clock` of the 120 bpm metronome: the
#     capture has the notes of beats 0–4 (5 onsets, 2 s apart first to last) and not beat 5's,
#     whose clock never came; a follower without the gate runs on by its tempo and plays it
#     0.25 s after the last clock, before the Stop (6 onsets).
# Sourced by ../scenarios.sh (see README.md here).
if [[ -n ${LIVE_CARILLON:-} ]]; then
  rate=${LIVE_RATE:-22050}
  song=$out/sync-120.mid
  "$probe" metronome "$song" --interval 0.5 --seconds 4 >"$out/sync-metronome.log" 2>&1 ||
    bad "sync: metronome file" "$(cat "$out/sync-metronome.log")"
  # clock_run NAME START-ARGS...: play $song with --clock-out to a clocks listener; the listener's log in $LOG.
  clock_run() {
    local name=$1; shift
    LOG=$out/$name-clocks.log
    "$probe" clocks --name "$name" --dump --idle 3 --seconds 40 >"$LOG" 2>&1 & LPID=$!
    wait_for "$LOG" '^ready ' 15 || { bad "sync: $name" "listener did not start"; return 1; }
    PORT=$(awk '/^ready /{print $2; exit}' "$LOG")
    "$LIVE_CARILLON" play "$song" -d hw:Loopback,0 -r "$rate" --period 1024 --periods "${SYNC_PERIODS:-4}" --soundfont "$LIVE_SF2" \
      --clock-out "$PORT" "$@" >"$out/$name-play.log" 2>&1; PRC=$?
    wait "$LPID"
  }
  t=$(ms)
  if clock_run sync-out; then
    seq=$(awk '/^transport /{printf "%s ", $2}' "$LOG")
    runs=$(grep '^run ' "$LOG"); summary=$(grep '^summary ' "$LOG")
    worst=$(grep -o 'worst-std=[0-9.]*' <<<"$summary" | cut -d= -f2)
    mean=$(grep -o 'mean=[0-9.]*' <<<"$runs" | head -1 | cut -d= -f2)
    n=$(grep -o 'clocks=[0-9]*' <<<"$summary" | cut -d= -f2)
    echo "MEASURE sync clock out, 1024×4 at $rate Hz: $seq| $runs | $summary"
    if [[ $PRC == 0 && $seq == "start stop " ]] && awk -v w="$worst" -v m="$mean" -v n="$n" \
        'BEGIN { exit !(w <= 0.5 && m > 20.733 && m < 20.933 && n >= 190 && n <= 194) }'
    then ok "sync: play --clock-out: Start, $n clocks at mean $mean ms, std ≤ $worst ms, Stop"
    else bad "sync: play --clock-out" "rc=$PRC [$seq] $runs $summary $(tail -3 "$out/sync-out-play.log")"; fi
  fi
  if clock_run sync-spp --start 1.01; then
    seq=$(awk '/^transport /{printf "%s ", $2}' "$LOG")
    echo "MEASURE sync clock out --start 1.01: $seq"
    if [[ $PRC == 0 && $seq == "spp=9 continue stop " ]]; then ok "sync: play --start 1.01 --clock-out: $seq"
    else bad "sync: play --start --clock-out" "rc=$PRC [$seq] $(tail -3 "$out/sync-spp-play.log")"; fi
  fi
  echo "    ($(($(ms) - t)) ms)"

  t=$(ms)
  long=$out/sync-120-long.mid reference=$out/sync-120-140.mid
  pattern=36,42,38,42,36,45,38,50,36,36,39,42,56,38,45,42
  "$probe" metronome "$long" --interval 0.5 --seconds 20 --notes "$pattern" >>"$out/sync-metronome.log" 2>&1
  "$probe" metronome "$reference" --interval 0.5 --seconds 20 --notes "$pattern" --then-bpm 140 --from-beat 8 \
    >>"$out/sync-metronome.log" 2>&1
  "$LIVE_CARILLON" render "$reference" -o "$out/sync-reference.wav" -r "$rate" --soundfont "$LIVE_SF2" -q \
    >"$out/sync-reference.log" 2>&1 || bad "sync: reference render" "$(tail -3 "$out/sync-reference.log")"
  # Beats 8–15 alone, at 140 bpm: the part after the Continue.
  "$probe" metronome "$out/sync-140-after.mid" --interval 0.428571 --seconds 3.43 --notes "$(cut -d, -f9-16 <<<"$pattern")" \
    >>"$out/sync-metronome.log" 2>&1
  "$LIVE_CARILLON" render "$out/sync-140-after.mid" -o "$out/sync-reference-after.wav" -r "$rate" --soundfont "$LIVE_SF2" -q \
    >>"$out/sync-reference.log" 2>&1 || bad "sync: reference render (after)" "$(tail -3 "$out/sync-reference.log")"
  LOG=$out/sync-in-clocks.log
  "$probe" clocks --name sync-in --idle 3 --seconds 60 >"$LOG" 2>&1 & LPID=$!
  if wait_for "$LOG" '^ready ' 15; then
    PORT=$(awk '/^ready /{print $2; exit}' "$LOG")
    "$probe" clock-master --name clock-master --bpm 120 --beats 8 --then-bpm 140 --then-beats 8 --jitter-ms 1 --wait 120 \
      >"$out/sync-master.log" 2>&1 & MPID=$!
    wait_for "$out/sync-master.log" '^master ' 15
    aconnect -l >"$out/sync-aconnect.log" 2>&1
    master=$(awk '/^master /{print $2; exit}' "$out/sync-master.log"):1
    "${ARECORD[@]}" -q -D hw:Loopback,1 -f FLOAT_LE -r "$rate" -c 2 -d 120 "$out/sync-in.wav" & RECPID=$!
    "$LIVE_CARILLON" play "$long" -d hw:Loopback,0 -r "$rate" --period 1024 --periods "${SYNC_PERIODS:-4}" --soundfont "$LIVE_SF2" \
      --sync "clock=$master" --clock-out "$PORT" -v >"$out/sync-in-play.log" 2>&1 & CPID=$!
    wait "$MPID"; mrc=$?
    sleep 1
    kill -INT "$CPID"; wait "$CPID"; crc=$?
    kill -INT "$RECPID" 2>/dev/null; wait "$RECPID"
    wait "$LPID"
    seq=$(awk '/^transport /{printf "%s ", $2}' "$LOG")
    bpms=$(grep -o 'bpm=[0-9.]*' "$LOG" | cut -d= -f2 | tr '\n' ' ')
    shown=$(grep -o 'following [^ ]* .* at [0-9.]* BPM' "$out/sync-in-play.log" | tail -1)
    echo "MEASURE sync clock in: master 120 then 140 bpm ±1 ms; carillon's clock out: $seq| runs at $bpms| $shown"
    read -r b1 b2 _ <<<"$bpms"
    # The master's SPP 32 sends a pointer only if it moved the piece: a Stop seen after the piece
    # reached the gate (clock 192's place, beat 8) already stands there.
    if [[ $mrc == 0 && $crc == 0 && ($seq == "start stop spp=32 spp=32 continue stop " || $seq == "start stop spp=32 continue stop ") ]] &&
      awk -v a="$b1" -v b="$b2" 'BEGIN { exit !(a > 118.8 && a < 121.2 && b > 138.6 && b < 141.4) }' && [[ -n $shown ]]
    then ok "sync: play --sync clock follows Start/Stop/SPP/Continue at $b1 and $b2 bpm ($shown)"
    else bad "sync: play --sync clock" "master rc=$mrc play rc=$crc [$seq] [$bpms] $(tail -5 "$out/sync-in-play.log")"; fi
    # The sound: before the Stop (beats 0–7, 0–4 s of the reference) and after the Continue
    # (beats 8–15: their own render), each against a render at the master's tempo.
    before=$("$probe" envelope "$out/sync-in.wav" "$out/sync-reference.wav" --max-lag 40 --min-correlation 0.95 \
      --reference-until 4); brc=$?
    after=$("$probe" envelope "$out/sync-in.wav" "$out/sync-reference-after.wav" --max-lag 40 --min-correlation 0.95 \
      --reference-until 3.43); arc=$?
    gap=$(( $(lag_ms "$after") - $(lag_ms "$before") ))
    echo "MEASURE sync clock in, capture against the render at 120/140 bpm: before Stop $before | after Continue $after | gap ${gap} ms"
    if ((brc == 0 && arc == 0 && gap >= 4550 && gap <= 4650))
    then ok "sync: play --sync clock sounds as the render at the master's tempo (${before%% lag*}, ${after%% lag*}, Continue ${gap} ms on)"
    else bad "sync: play --sync clock's sound" "before Stop: $before; after Continue: $after; gap $gap ms (4600 ±50)"; fi
  else bad "sync: play --sync clock" "listener did not start"; fi
  echo "    ($(($(ms) - t)) ms)"

  t=$(ms)
  "$probe" clock-master --name clock-master-stop --bpm 120 --beats 4 --once --extra-clocks 12 --stop-after 0.4 --wait 60 \
    >"$out/sync-stop-master.log" 2>&1 & MPID=$!
  if wait_for "$out/sync-stop-master.log" '^master ' 15; then
    master=$(awk '/^master /{print $2; exit}' "$out/sync-stop-master.log"):1
    "${ARECORD[@]}" -q -D hw:Loopback,1 -f FLOAT_LE -r "$rate" -c 2 -d 60 "$out/sync-stop.wav" & RECPID=$!
    "$LIVE_CARILLON" play "$song" -d hw:Loopback,0 -r "$rate" --period 1024 --periods "${SYNC_PERIODS:-4}" --soundfont "$LIVE_SF2" \
      --sync "clock=$master" -v >"$out/sync-stop-play.log" 2>&1 & CPID=$!
    wait "$MPID"; mrc=$?
    sleep 1
    kill -INT "$CPID"; wait "$CPID"; crc=$?
    kill -INT "$RECPID" 2>/dev/null; wait "$RECPID"
    heard=$("$probe" onsets "$out/sync-stop.wav" --interval 0.5)
    n=$(grep -o 'n=[0-9]*' <<<"$heard" | head -1 | cut -d= -f2)
    echo "MEASURE sync clock gate, a master that stops 12 clocks into beat 4, its Stop 0.4 s on: $heard | $(grep '^stop ' "$out/sync-stop-master.log")"
    if [[ $mrc == 0 && $crc == 0 && $n == 5 ]]
    then ok "sync: play --sync clock holds at the clock that never came (5 notes for beats 0–4, not beat 5's)"
    else bad "sync: play --sync clock's gate" "master rc=$mrc play rc=$crc; $n onsets, 5 expected ($heard) $(tail -3 "$out/sync-stop-play.log")"; fi
  else bad "sync: the mid-beat stop" "master did not start: $(cat "$out/sync-stop-master.log")"; fi
  echo "    ($(($(ms) - t)) ms)"
fi
