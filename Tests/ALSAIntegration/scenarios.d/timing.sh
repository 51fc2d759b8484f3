# Timing of live input (--timing stamped|asap): a metronome (one identical woodblock note every
# 125 ms for 20 s, written by the probe) played by aplaymidi through Midi Through (14:0) into
# `carillon live`, out to hw:Loopback,0 and captured by arecord from hw:Loopback,1; the probe
# times the onsets in the capture. Required: standard deviation of the inter-onset intervals
# ≤ 1.5 ms with --timing stamped, at 1024- and 256-frame periods. Reported beside it, not
# required, with ALSA_VM_MEASURE=1 only (Benchmarks, not CI): --timing asap, the fluidsynth CLI in
# the same harness (connected with aconnect), and the output clock's two estimates.
# Sourced by ../scenarios.sh (see README.md here).
if [[ -n ${LIVE_CARILLON:-} ]]; then
  rate=${LIVE_RATE:-22050}
  click=$out/metronome.mid
  if ! "$probe" metronome "$click" --interval 0.125 --seconds 20 >"$out/metronome.log" 2>&1; then
    bad "timing: metronome file" "$(cat "$out/metronome.log")"
  else
    # timing_capture NAME [FORMAT]: arecord into $out/timing-NAME.wav until timing_capture_end (at most 60 s).
    # The loopback gives both ends one format: FORMAT is what the playing side opened (FLOAT_LE unless told).
    timing_capture() { "${ARECORD[@]}" -q -D hw:Loopback,1 -f "${2:-FLOAT_LE}" -r "$rate" -c 2 -d 60 "$out/timing-$1.wav" & RECPID=$!; }
    timing_capture_end() { kill -INT "$RECPID" 2>/dev/null; wait "$RECPID" 2>/dev/null; }
    # The click, then a second for the last note to sound.
    timing_play() { aplaymidi -p 14:0 "$click"; local rc=$?; sleep 1; return $rc; }

    # Which says best where the output's frames lie on the monotonic clock: the block starts
    # (OutputClock's choice) or snd_pcm_delay at each block start? Measured, not asserted.
    for period in 1024 256; do
      [[ ${ALSA_VM_MEASURE:-0} == 1 ]] || break
      timing_capture "clock-$period"
      "$probe" sine --device hw:Loopback,0 --rate "$rate" --period "$period" --periods 4 --seconds 8 --format float \
        --rt --clock >"$out/timing-clock-$period.log" 2>&1
      timing_capture_end
      grep '^clock ' "$out/timing-clock-$period.log" | sed "s/^/MEASURE timing $period×4 at $rate Hz: /"
    done

    # Periods: 4 of them, so the emulated guest does not underrun (the timing is what is measured).
    for spec in "1024 stamped" "1024 asap" "256 stamped" "256 asap"; do
      read -r period mode <<<"$spec"
      [[ $mode == asap && ${ALSA_VM_MEASURE:-0} != 1 ]] && continue
      t=$(ms)
      name=$mode-$period log=$out/timing-$mode-$period.log
      timing_capture "$name"
      "$LIVE_CARILLON" live -d hw:Loopback,0 -r "$rate" --period "$period" --periods 4 --soundfont "$LIVE_SF2" \
        --timing "$mode" --connect 14:0 --duration 60 >"$log" 2>&1 & lp=$!
      wait_for "$log" 'MIDI in at' 20
      sleep 0.5
      timing_play; arc=$?
      kill -INT "$lp"; wait "$lp"; lrc=$?
      timing_capture_end
      limit=()
      [[ $mode == stamped ]] && limit=(--max-std 1.5)
      res=$("$probe" onsets "$out/timing-$name.wav" --interval 0.125 --min-count 150 "${limit[@]}"); orc=$?
      end=$(grep '^carillon live: ended' "$log" | grep -o 'xruns=[0-9]*')
      shown=$(grep -o 'timing: [a-z]*' "$log" | tail -1)
      echo "MEASURE timing carillon live --timing $mode, $period×4 at $rate Hz: $res, $end"
      if [[ $mode == stamped ]]; then
        if [[ $lrc == 0 && $arc == 0 && $orc == 0 && $shown == "timing: $mode" ]]
        then ok "timing: metronome -> carillon live --timing stamped --period $period: $res"
        else bad "timing --timing stamped --period $period" "live rc=$lrc aplaymidi rc=$arc [$shown] $res $(tail -3 "$log")"; fi
      elif [[ $lrc != 0 || $arc != 0 || $shown != "timing: $mode" ]]; then
        bad "timing --timing asap --period $period" "live rc=$lrc aplaymidi rc=$arc [$shown] $(tail -3 "$log")"
      fi
      echo "    ($(($(ms) - t)) ms)"
    done

    # The fluidsynth CLI, same harness: its shell reads stdin (kept open by sleep) so it stays up.
    if [[ ${ALSA_VM_MEASURE:-0} == 1 ]] && command -v fluidsynth >/dev/null; then
      for period in 1024 256; do
        t=$(ms)
        log=$out/timing-fluidsynth-$period.log
        # fluidsynth first: it insists on its own buffer, which the capture side then takes. Its ALSA
        # driver writes S16 interleaved or float non-interleaved (fluid_alsa_formats); the loopback has
        # no non-interleaved access, so it plays S16_LE, and the capture must ask for the same (a
        # FLOAT_LE capture opened first leaves it "Failed to find an audio format").
        sleep 60 | fluidsynth -a alsa -m alsa_seq -o audio.alsa.device=hw:Loopback,0 -o audio.period-size="$period" \
          -o audio.periods=4 -o audio.sample-format=16bits -r "$rate" "$LIVE_SF2" >"$log" 2>&1 & fp=$!
        fluid=""
        for _ in $(seq 100); do
          fluid=$(aconnect -o | grep "^client [0-9]*: 'FLUID Synth" | grep -o '^client [0-9]*' | grep -o '[0-9]*$' | head -1)
          [[ -n $fluid ]] && break
          sleep 0.2
        done
        if [[ -z $fluid ]]; then
          echo "MEASURE timing fluidsynth $period×4 at $rate Hz: not measured (no FLUID Synth client; $(tail -2 "$log"))"
          kill "$fp" 2>/dev/null; wait "$fp" 2>/dev/null; timing_capture_end
          continue
        fi
        timing_capture "fluidsynth-$period" S16_LE
        aconnect 14:0 "$fluid:0"
        sleep 0.5
        timing_play
        timing_capture_end
        kill "$fp" 2>/dev/null; wait "$fp" 2>/dev/null
        res=$("$probe" onsets "$out/timing-fluidsynth-$period.wav" --interval 0.125)
        echo "MEASURE timing fluidsynth -a alsa audio.period-size=$period ×4 at $rate Hz: $res"
        echo "    ($(($(ms) - t)) ms)"
      done
    fi
  fi
fi
