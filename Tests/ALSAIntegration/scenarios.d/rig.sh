# The keyboard rig (issue 29), with the shipped mappings/stage-piano.yaml: bass below C3 on
# channel 2 an octave up, piano (1) and strings (3) from C3, the top two octaves also to the
# external port named "Hardware Synth" — here a probe listener whose client has that name, so
# Carillon finds it by name as it would a hardware synth.
#  1. aplaymidi plays a keyboard part (keys on both sides of the split and of C5) into live:
#     the listener gets exactly the Synth zone's notes (channel 1, the keys ≥ C5, velocity
#     unchanged, each note-on with its note-off), and the loopback capture follows `render
#     --take` of what live recorded (`--record-midi`: each message at the frame it was placed,
#     so TCG's scheduling of aplaymidi is in the take): envelope correlation ≥ 0.95. The part
#     file itself rendered is measured beside it (0.789–0.812 on 11-27: aplaymidi's timing under
#     TCG is not the file's). scripts/test-jack checks a take's render to the sample.
#  2. A sender killed while it holds a chord across the split and the layer, pedal down:
#     silence on every channel within 2 s, and the external port gets its note-off.
#  3. A zone with midi-fx (x42 MIDI Chord) that sends to the external port and a channel:
#     the listener gets each key's C-major triad and octave on the port's channel, each
#     note-on with its note-off (queued on the render thread, sent by the control loop).
# Sourced by ../scenarios.sh (see README.md here).
if [[ -n ${LIVE_CARILLON:-} ]]; then
  rate=${LIVE_RATE:-22050}
  rig=$(dirname "$LIVE_MAPPING")/stage-piano.yaml
  # rig_synth NAME SECONDS: the "Hardware Synth" listener (RIGPID, RIGLOG).
  rig_synth() {
    RIGLOG=$out/rig-$1-synth.log
    "$probe" listen --name "Hardware Synth" --seconds "$2" >"$RIGLOG" 2>&1 & RIGPID=$!
    wait_for "$RIGLOG" '^ready ' 15
  }
  # rig_live NAME SECONDS ARGS...: carillon live with the rig, captured (RIGLIVE, RIGLIVELOG, RIGREC, RIGWAV).
  rig_live() {
    local name=$1 secs=$2; shift 2
    RIGWAV=$out/rig-$name.wav RIGLIVELOG=$out/rig-$name-live.log
    # Captured until rig_end (as live_run's): the start under TCG can take seconds.
    "${ARECORD[@]}" -q -D hw:Loopback,1 -f FLOAT_LE -r "$rate" -c 2 -d $((secs + 60)) "$RIGWAV" & RIGREC=$!
    "$LIVE_CARILLON" live -v -d hw:Loopback,0 -r "$rate" --period 512 --periods 8 --soundfont "$LIVE_SF2" \
      --mapping "$rig" --duration "$secs" "$@" >"$RIGLIVELOG" 2>&1 & RIGLIVE=$!
    wait_for "$RIGLIVELOG" 'MIDI in at' 20
  }
  rig_end() { wait "$RIGLIVE"; lrc=$?; sleep 0.5; kill -INT "$RIGREC" 2>/dev/null; wait "$RIGREC"; kill "$RIGPID" 2>/dev/null; wait "$RIGPID"; }
  # The Synth zone's notes the listener saw: "on|off KEY VEL" per line, channels checked apart.
  rig_notes() { awk '/^msg .* (noteOn|noteOff) /{ split($0, f, /[ =]+/); for (i in f) { if (f[i]=="ch") c=f[i+1]; if (f[i]=="note") n=f[i+1]; if (f[i]=="vel") v=f[i+1] }
                  print ($3=="noteOn" ? "on" : "off"), c, n, ($3=="noteOn" ? v : "") }' "$1"; }

  # 1. A played part through the rig.
  t=$(ms)
  part=$out/rig-part.mid
  # C2 B2 | C3 B4 | C5 C6 C7 (keys 36 47 | 48 71 | 72 84 96), 0.6 s apart, 0.4 s each, twice.
  "$probe" metronome "$part" --notes 36,47,48,71,72,84,96 --channel 1 --interval 0.6 --length 0.4 --seconds 8.4 --velocity 100 \
    >"$out/rig-part.log" 2>&1 || bad "rig: part file" "$(cat "$out/rig-part.log")"
  "$LIVE_CARILLON" render "$part" --mapping "$rig" --take -o "$out/rig-part-render.wav" -r "$rate" --soundfont "$LIVE_SF2" \
    >"$out/rig-part-render.log" 2>&1 || bad "rig: render --take" "$(tail -3 "$out/rig-part-render.log")"
  rig_synth part 40
  rig_live part 16 --record-midi "$out/rig-take.mid"
  aplaymidi -p carillon:0 "$part"; arc=$?
  rig_end
  seen=$(rig_notes "$RIGLOG" | sort -k3n -k1 | uniq -c | awk '{ printf "%s×%s ch%s %s %s; ", $1, $2, $3, $4, $5 }')
  want="2×off ch0 72 ; 2×on ch0 72 100; 2×off ch0 84 ; 2×on ch0 84 100; 2×off ch0 96 ; 2×on ch0 96 100; "
  partenv=$("$probe" envelope "$RIGWAV" "$out/rig-part-render.wav" --max-lag 10)
  "$LIVE_CARILLON" render "$out/rig-take.mid" --mapping "$rig" --take -o "$out/rig-take.wav" -r "$rate" --soundfont "$LIVE_SF2" \
    >"$out/rig-take.log" 2>&1; trc=$?
  env=$("$probe" envelope "$RIGWAV" "$out/rig-take.wav" --max-lag 10 --min-correlation 0.95); erc=$?
  echo "MEASURE rig: external port saw: $seen| capture against render --take of live's take: $env | of the part file: $partenv"
  grep '^zones:' "$RIGLIVELOG" | sed 's/^/    /'
  if [[ $arc == 0 && $lrc == 0 && $seen == "$want" ]]; then
    ok "rig: aplaymidi -> live --mapping stage-piano: the \"Hardware Synth\" port got exactly the Synth zone's notes ($seen)"
  else bad "rig: external port" "aplaymidi rc=$arc live rc=$lrc saw [$seen] want [$want] $(grep -v '^parameter' "$RIGLIVELOG" | tail -5)"; fi
  if [[ $trc == 0 && $erc == 0 ]]; then
    ok "rig: the capture follows render --mapping stage-piano --take of live's --record-midi take ($env)"
  else bad "rig: capture against the take's render" "render rc=$trc $(tail -3 "$out/rig-take.log") | $env"; fi
  echo "    ($(($(ms) - t)) ms)"

  # 2. A sender killed holding E2 (bass), C4 (piano + strings) and E5 (piano + strings + synth), pedal down.
  t=$(ms)
  rig_synth kill 40
  rig_live kill 12 --autoconnect
  "$probe" send --name rig-player --notes 40,60,76 --sustain --hold >"$out/rig-player.log" 2>&1 & spid=$!
  wait_for "$RIGLIVELOG" "autoconnected .*'rig-player'" 10
  sleep 4
  kill -KILL $spid; wait $spid 2>/dev/null
  t_kill=$(ms)
  wait_for "$RIGLOG" '^msg .* noteOff .*note=76' 5; offms=$(($(ms) - t_kill))
  rig_end
  hr=$("$probe" hold-release "$RIGWAV" --held 4 --after 2); hrc=$?
  ext=$(rig_notes "$RIGLOG" | tr '\n' ';')
  echo "MEASURE rig kill: $hr | external port: $ext (note-off ${offms} ms after the kill)"
  if [[ $lrc == 0 && $hrc == 0 && $ext == "on 0 76 100;off 0 76 ;" ]] && grep -q 'disconnected .*notes released' "$RIGLIVELOG"
  then ok "rig: kill -9 of a player holding a split + layer chord, pedal down -> silence within 2 s ($hr), the external port's note-off in $offms ms"
  else bad "rig kill" "rc=$lrc $hr ext=[$ext] $(grep -v '^parameter' "$RIGLIVELOG" | tail -5)"; fi
  echo "    ($(($(ms) - t)) ms)"

  # 3. midi-fx to the external port: keys C3 and G3, each its chord (4 notes) on channel 3 of "Hardware Synth".
  t=$(ms)
  fxrig=$out/rig-fx.yaml
  printf '%s\n' 'zones:' '  - { name: Chords, to: [2, { port: "Hardware Synth", channel: 3 }], midi-fx: ["http://gareus.org/oss/lv2/midifilter#midichord"] }' >"$fxrig"
  "$probe" metronome "$out/rig-fx.mid" --notes 48,55 --channel 1 --interval 0.8 --length 0.5 --seconds 1.6 --velocity 90 \
    >"$out/rig-fx-part.log" 2>&1 || bad "rig fx: part file" "$(cat "$out/rig-fx-part.log")"
  rig_synth fx 30
  RIGWAV=$out/rig-fx.wav RIGLIVELOG=$out/rig-fx-live.log
  "${ARECORD[@]}" -q -D hw:Loopback,1 -f FLOAT_LE -r "$rate" -c 2 -d 60 "$RIGWAV" & RIGREC=$!
  "$LIVE_CARILLON" live -v -d hw:Loopback,0 -r "$rate" --period 512 --periods 8 --soundfont "$LIVE_SF2" \
    --mapping "$fxrig" --duration 8 >"$RIGLIVELOG" 2>&1 & RIGLIVE=$!
  wait_for "$RIGLIVELOG" 'MIDI in at' 20
  aplaymidi -p carillon:0 "$out/rig-fx.mid"; arc=$?
  rig_end
  fxseen=$(rig_notes "$RIGLOG" | sort -k3n -k1 | uniq -c | awk '{ printf "%s×%s ch%s %s %s; ", $1, $2, $3, $4, $5 }')
  fxwant=""
  # C3 → C3 E3 G3 C4 (48 52 55 60); G3 → G3 B3 D4 G4 (55 59 62 67): 55 twice.
  for k in 48 52 55 59 60 62 67; do
    n=1; [[ $k == 55 ]] && n=2
    fxwant+="${n}×off ch2 $k ; ${n}×on ch2 $k 90; "
  done
  echo "MEASURE rig fx: the external port saw: $fxseen"
  if [[ $arc == 0 && $lrc == 0 && $fxseen == "$fxwant" ]]; then
    ok "rig: a midi-fx zone (x42 MIDI Chord) to the \"Hardware Synth\" port: each key's chord there, every note ended ($fxseen)"
  else bad "rig fx: external port" "aplaymidi rc=$arc live rc=$lrc saw [$fxseen] want [$fxwant] $(grep -v '^parameter' "$RIGLIVELOG" | tail -5)"; fi
  echo "    ($(($(ms) - t)) ms)"
fi
