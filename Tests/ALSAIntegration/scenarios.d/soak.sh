# The ALSA soak (issue 40), on demand only, never in CI: runs when ALSA_VM_SOAK_MINUTES is set,
#   ALSA_VM_SOAK_MINUTES=12 ALSA_VM_TIMEOUT=1800 VM_ONLY=soak scripts/test-alsa-vm --no-cli --no-bundle
# `carillon live` on hw:Loopback,0 through mappings/stage-piano.yaml for N minutes, in segments of
# ALSA_VM_SOAK_SEGMENT seconds (60): each segment aplaymidi plays a random performance (keys over
# the whole keyboard, so every zone; the sustain pedal; scene switches and the three faders on
# channel 16), and halfway through it a fault, in turn: the loopback card's device unbound
# through sysfs and bound again 3 s later (a USB interface unplugged), or live stopped (SIGSTOP)
# for 1.5 s and then ten times for 250 ms. The JACK faults (server restarts) are
# Benchmarks/soak.sh's. Measured per segment: live alive and sounding after the fault (after an
# unbind: the time from the bind to live's "audio back" and to the first sound in a capture
# started once the card is back; after stalls: the RMS 0.5-2.5 s after the last CONT); a stuck
# note (the capture 3-4 s after the performance's last note-off not at least 6 dB below 1-2 s
# after it, unless at digital silence, as Benchmarks/soak.py judges); RSS (VmRSS) at each
# segment's start and at the end.
# Sourced by ../scenarios.sh (see README.md here).
if [[ -n ${LIVE_CARILLON:-} && -n ${ALSA_VM_SOAK_MINUTES:-} ]]; then
  t=$(ms)
  rate=${LIVE_RATE:-22050}
  seg=${ALSA_VM_SOAK_SEGMENT:-60}
  segments=$((ALSA_VM_SOAK_MINUTES * 60 / seg))
  aloop=/sys/bus/platform/drivers/snd_aloop
  dev=$(basename "$(ls -d "$aloop"/snd_aloop.* 2>/dev/null | head -1)")
  soak=$out/soak
  mkdir -p "$soak"
  slog=$soak/live.log
  # soak_performance OUT.mid SECONDS SEED: the random performance (csvmidi's text, made by awk).
  soak_performance() {
    awk -v secs="$2" -v seed="$3" 'BEGIN {
      srand(seed); tps = 960; n = 0; pedal = 0
      for (t = 0.3; t < secs - 6; t += 0.03 + rand() * 0.15) {
        k = 28 + int(rand() * 73); d = 0.08 + rand() * 0.7
        if (t + d > secs - 5.6) d = secs - 5.6 - t
        if (busy[k] <= t && d > 0.02) {
          ev[n++] = int(t * tps) ", Note_on_c, 0, " k ", " 30 + int(rand() * 90)
          ev[n++] = int((t + d) * tps) ", Note_off_c, 0, " k ", 0"
          busy[k] = t + d + 0.01
        }
        if (rand() < 0.02) { pedal = 127 - pedal; ev[n++] = int(t * tps) ", Control_c, 0, 64, " pedal }
        if (rand() < 0.004) ev[n++] = int(t * tps) ", Program_c, 15, " int(rand() * 2)
        if (rand() < 0.02) ev[n++] = int(t * tps) ", Control_c, 15, " 20 + int(rand() * 3) ", " 95 + int(rand() * 33)
      }
      ev[n++] = int((secs - 5.5) * tps) ", Control_c, 0, 64, 0"
      for (i = 0; i < n; i++) print ev[i]
    }' | sort -t, -k1,1n -s | {
      echo "0, 0, Header, 0, 1, 480"; echo "1, 0, Start_track"; echo "1, 0, Tempo, 500000"
      sed 's/^/1, /'
      echo "1, $(( $2 * 960 )), End_track"; echo "0, 0, End_of_file"
    } | csvmidi - "$1"
  }
  soak_rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
  # soak_levels FILE [--from S --to S]...: the capture's levels (dBFS, -inf for digital silence,
  # comma-separated) and first sound: one read of the file, at a priority above live's (a debug
  # probe at normal priority took minutes a segment under TCG).
  soak_levels() { chrt -f 85 "$probe" level "$@"; }
  "$LIVE_CARILLON" live -v -d hw:Loopback,0 -r "$rate" --period 512 --periods 8 --soundfont "$LIVE_SF2" \
    --mapping "$(dirname "$LIVE_MAPPING")/stage-piano.yaml" >"$slog" 2>&1 & spid=$!
  wait_for "$slog" 'MIDI in at' 30
  rss_first=$(soak_rss "$spid")
  # This shell (the sender, the faults and their timing) at a real-time priority above live's
  # threads: under TCG a normal shell waited seconds for the CPU (stalls.sh); the analyses at
  # priority above live's too (soak_levels), between performances.
  chrt -f -p 90 $$ >/dev/null 2>&1
  tried=0 survived=0 stuck=0 returns=() backs=() rss_line=""
  for ((i = 1; i <= segments; i++)); do
    kill -0 "$spid" 2>/dev/null || { echo "    soak: live is gone before segment $i"; break; }
    rss_line+="$(( $(soak_rss "$spid") / 1024 )) "
    perf=$soak/perf-$i.mid wav=$soak/seg-$i.wav play=$((seg - 6))
    soak_performance "$perf" "$play" "$i" || { bad "soak: performance $i" "csvmidi failed"; break; }
    "${ARECORD[@]}" -q -D hw:Loopback,1 -f FLOAT_LE -r "$rate" -c 2 -d $((seg + 30)) "$wav" & rec=$!; trec=$(ms)
    aplaymidi -p carillon:0 "$perf" & ap=$!
    sleep $((play / 2))
    tried=$((tried + 1)) detail=""
    if ((i % 2 == 1)); then
      fault=unbind
      backs_before=$(grep -c '^audio back' "$slog")
      echo "$dev" >"$aloop/unbind"; sleep 3; echo "$dev" >"$aloop/bind"; tb=$(ms)
      wait "$rec" 2>/dev/null  # the capture ended with its card
      # A new capture as soon as the card is there again (arecord fails at once while it is not).
      for ((k = 0; k < 100; k++)); do
        "${ARECORD[@]}" -q -D hw:Loopback,1 -f FLOAT_LE -r "$rate" -c 2 -d $((seg + 30)) "$wav" 2>/dev/null & rec=$!; trec=$(ms)
        sleep 0.1; kill -0 "$rec" 2>/dev/null && break
      done
      back=""
      for ((k = 0; k < 200; k++)); do
        (($(grep -c '^audio back' "$slog") > backs_before)) && { back=$(($(ms) - tb)); break; }
        sleep 0.05
      done
    else
      fault=stall
      kill -STOP "$spid"; sleep 1.5; kill -CONT "$spid"
      for _ in 1 2 3 4 5 6 7 8 9 10; do sleep 0.25; kill -STOP "$spid"; sleep 0.25; kill -CONT "$spid"; done
      tc=$(($(ms) - trec))
    fi
    wait "$ap"
    tend=$(ms)
    sleep 4.2
    kill -INT "$rec" 2>/dev/null; wait "$rec" 2>/dev/null
    alive=no; kill -0 "$spid" 2>/dev/null && alive=yes
    sounding=no
    if [[ $fault == unbind ]]; then
      lv=$(soak_levels "$wav" --from -8.2 --to -7.2 --from -6.2 --to -5.2)
      first=$(grep -o 'first-sound=[^ ]*' <<<"$lv" | cut -d= -f2)
      if [[ $first != none && -n $first ]]; then
        sounding=yes
        to_sound=$(awk -v f="$first" -v d=$((trec - tb)) 'BEGIN { printf "%d", f * 1000 + d }')
        returns+=("$to_sound"); backs+=("${back:-never}")
        detail="audio back ${back:-never} ms after the bind, sound ${to_sound} ms after it"
      else detail="no sound after the bind (audio back ${back:-never} ms after it)"; fi
    else
      lv=$(soak_levels "$wav" --from -8.2 --to -7.2 --from -6.2 --to -5.2 \
        --from "$(awk -v c="$tc" 'BEGIN { print c / 1000 + 0.5 }')" --to "$(awk -v c="$tc" 'BEGIN { print c / 1000 + 2.5 }')")
      db=$(grep -o 'dbfs=[^ ]*' <<<"$lv" | cut -d= -f2 | cut -d, -f3)
      [[ $db != -inf ]] && awk -v d="$db" 'BEGIN { exit !(d > -60) }' && sounding=yes
      detail="${db} dBFS 0.5-2.5 s after the last CONT"
    fi
    # The performance's last event is 5.5 s before its end (aplaymidi stays connected until then:
    # had it left, the sequencer client would have released a stuck note); the capture ends 4.2 s
    # after that: 1-2 s and 3-4 s after the last event.
    earlier=$(grep -o 'dbfs=[^ ]*' <<<"$lv" | cut -d= -f2 | cut -d, -f1) last=$(grep -o 'dbfs=[^ ]*' <<<"$lv" | cut -d= -f2 | cut -d, -f2)
    held=no
    [[ $last != -inf ]] && awk -v e="$earlier" -v l="$last" 'BEGIN { exit !(l > -90 && (e == "-inf" || l > e - 6)) }' && held=yes
    [[ $held == yes ]] && stuck=$((stuck + 1))
    [[ $alive == yes && $sounding == yes ]] && survived=$((survived + 1))
    echo "MEASURE soak segment $i: $fault, alive=$alive sounding=$sounding ($detail); tail ${earlier} → ${last} dBFS (stuck=$held)"
  done
  rss_last=$(soak_rss "$spid")
  chrt -o -p 0 $$ >/dev/null 2>&1
  kill -INT "$spid"; wait "$spid"; src=$?
  fin=$(grep '^carillon live: ended' "$slog" | tail -1 | grep -o 'blocks=.*')
  echo "MEASURE soak: $ALSA_VM_SOAK_MINUTES min, $segments segments of $seg s: faults survived $survived of $tried, stuck notes $stuck," \
    "RSS $((rss_first / 1024)) → $((rss_last / 1024)) MiB (by segment: ${rss_line% }), device return to audio back ${backs[*]} ms," \
    "to sound ${returns[*]} ms; live exit $src; $fin"
  grep -cE '^no audio' "$slog" | sed 's/^/    "no audio" lines: /'
  if [[ $tried -gt 0 && $survived == "$tried" && $stuck == 0 && $src == 0 ]]; then
    ok "soak: $survived of $tried faults survived, no stuck note, RSS $((rss_first / 1024)) → $((rss_last / 1024)) MiB"
  else bad "soak" "survived $survived of $tried, stuck $stuck, live exit $src; $(grep -v '^parameter' "$slog" | tail -4 | tr '\n' ' ')"; fi
  echo "    ($(($(ms) - t)) ms)"
fi
