# Sourced by ../scenarios.sh inside the ALSA VM (see README.md): feedback to
# controllers, MIDI learn, hot reload and scenes, with `carillon live` against
# VirMIDI (client 24) as the controller and the Loopback card as the sound card.
#
# fl_live NAME SECONDS ARGS... : carillon live -v in the background (FLPID, FLLOG), no terminal:
# each parameter value and a status line every 2 s in the log.
fl_live() {
  local name=$1 secs=$2; shift 2
  FLLOG=$out/fl-$name.log
  "$LIVE_CARILLON" live -v --duration "$secs" "$@" >"$FLLOG" 2>&1 & FLPID=$!
  wait_for "$FLLOG" 'MIDI in at' 20
}
# fl_audio NAME SECONDS ARGS... : the same with audio to hw:Loopback,0, captured by arecord (FLWAV).
fl_audio() {
  local name=$1 secs=$2; shift 2
  FLWAV=$out/fl-$name.wav
  # Long enough for the SoundFont's loading under emulation (seconds) before the first note.
  "${ARECORD[@]}" -q -D hw:Loopback,1 -f FLOAT_LE -r "${LIVE_RATE:-22050}" -c 2 -d $((secs + 12)) "$FLWAV" & FLREC=$!
  sleep 0.3
  fl_live "$name" "$secs" -d hw:Loopback,0 -r "${LIVE_RATE:-22050}" --period 512 --periods 8 --soundfont "$LIVE_SF2" "$@"
}
# Held notes: `hold-release --held 3 --after 4` wants sound 0.5…2.5 s after the first onset and
# silence 7…8.5 s after it. Under emulation each amidi call takes a few tenths of a second, so the
# notes end (by the reload, or their note-offs) 5–6 s after the onset; a stuck note would still
# sound at 7 s. The capture stops when carillon live ends, so that silence is carillon's own.
# fl_save TEXT FILE: as an editor saves (a new file renamed over the old one).
fl_save() { printf '%s\n' "$1" >"$2.tmp" && mv "$2.tmp" "$2"; }
# The voices the last status line (every 2 s, before the shutdown's all-sound-off) reports.
fl_voices() { grep '^status t=' "$1" | tail -1 | grep -o 'voices=[0-9]*' | cut -d= -f2; }

if [[ -n ${LIVE_CARILLON:-} ]]; then

  # Feedback: the mapping's port: connects VirMIDI 24:0 both ways; aseqdump listens on carillon:1 too.
  # CC 7 moves the strip's gain: the follower (CC 11), the 14-bit fader (CC 2+34) and the toggle's LED
  # go out; CC 7 itself does not come back. A program change selects a scene, which moves CC 7 back.
  t=$(ms)
  cat >"$out/fl-feedback.yaml" <<'YAML'
name: VM feedback
port: Virtual Raw MIDI 2-0
channel: 1
controls:
  - name: Volume
    kind: fader
    source: { cc: 7 }
    soft-takeover: false
    targets: [strip.1.gain]
  - name: Motor fader       # a second fader on the same strip: it follows
    kind: fader
    source: { cc: 11 }
    targets: [strip.1.gain]
  - name: Fine
    kind: fader
    source: { cc14: 2 }
    targets: [strip.1.gain]
  - name: Mute
    kind: toggle
    source: { cc: 40 }
    targets: [strip.2.mute]
  - name: Silent
    kind: knob
    source: { cc: 12 }
    feedback: false
    targets: [strip.1.gain]
  - name: Scene
    kind: selector
    source: program-change
    values: [0, 1]
    targets: [scene.select]
scenes:
  - name: Quiet
    controls: { Volume: -30 }
  - name: Full
    controls: { Volume: 0 }
YAML
  stdbuf -oL aseqdump >"$out/fl-aseqdump.log" 2>&1 & DUMPPID=$!
  timeout 12 amidi -p hw:VirMIDI,0 -d >"$out/fl-amidi.log" 2>&1 & AMIDIPID=$!
  sleep 0.5
  fl_live feedback 7 --no-audio --mapping "$out/fl-feedback.yaml"
  aconnect carillon:1 aseqdump:0; crc=$?
  sleep 0.5
  amidi -p hw:VirMIDI,0 -S 'B0 07 64'          # Volume to 100
  sleep 0.5
  amidi -p hw:VirMIDI,0 -S 'B0 28 7F B0 28 00'  # Mute: press and release (the LED must stay lit)
  sleep 0.5
  amidi -p hw:VirMIDI,0 -S 'C0 01'             # scene Full: Volume to 0 dB
  wait "$FLPID"; rc=$?
  sleep 0.3
  kill "$DUMPPID" 2>/dev/null; wait "$DUMPPID" 2>/dev/null
  wait "$AMIDIPID" 2>/dev/null
  dump=$out/fl-aseqdump.log
  # 0 dB of -60…+6 dB is 60/66 of the travel: 115.
  if [[ $rc == 0 && $crc == 0 ]] && has "$FLLOG" "feedback from [0-9]+:1 to 24:0" &&
    has "$dump" 'controller 11, value 100' && has "$dump" 'controller 2, value 100' && has "$dump" 'controller 34, value 100' &&
    has "$dump" 'controller 40, value 127' && has "$dump" 'controller 7, value 115' && has "$dump" 'controller 11, value 115' &&
    ! has "$dump" 'controller 7, value 100' && ! has "$dump" 'controller 12,' && ! has "$dump" 'Program change'
  then ok "feedback on carillon:1 seen by aseqdump: follower CC 11=100, 14-bit CC 2/34, toggle LED CC 40=127, scene -> CC 7=115; CC 7=100 not echoed ($(grep -c 'Control change' "$dump") CCs)"
  else bad "feedback to aseqdump" "rc=$rc aconnect=$crc $(grep -v '^parameter' "$FLLOG" | head -5 | tr '\n' ' ') | $(tail -20 "$dump" | tr '\n' ' ')"; fi
  # The mapping's port: pattern connected the feedback to VirMIDI 24:0: its raw MIDI side (amidi -d)
  # received the bytes, with running status (B0 once, then controller and value pairs).
  bytes=$(tr -d ' \n' <"$out/fl-amidi.log")
  if [[ $bytes == *0B640264* && $bytes != *0764* ]]
  then ok "feedback through the mapping's port: to hw:VirMIDI,0, amidi -d got ${#bytes} hex digits, CC 11=100 and CC 2=100 among them"
  else bad "feedback via port: pattern" "$(head -c 600 "$out/fl-amidi.log")"; fi
  echo "    ($(($(ms) - t)) ms)"

  # MIDI learn from the view's key: on a pseudo-terminal (script), 'l' arms learn for the chosen
  # (first) control; CC 21 moved on the VirMIDI port binds to it; the file keeps its comments.
  t=$(ms)
  learn=$out/fl-learn.yaml
  cat >"$learn" <<'YAML'
# VM learn: this comment must survive.
name: VM learn
channel: 1
controls:
  - name: Volume            # learn binds this one
    kind: fader
    source: { cc: 7 }       # the volume fader
    soft-takeover: false
    targets: [strip.1.gain]
YAML
  keys=$(mktemp -u /tmp/fl-keys.XXXXXX)   # not in $out: the shared folder takes no fifo
  mkfifo "$keys"
  FLLOG=$out/fl-learn.log
  TERM=xterm script -qec "$LIVE_CARILLON live --no-audio --mapping $learn --connect 24:0 --duration 8" /dev/null <"$keys" >"$FLLOG" 2>&1 & FLPID=$!
  exec 7>"$keys"
  if wait_for "$FLLOG" 'keys: ' 20; then
    printf l >&7
    wait_for "$FLLOG" 'learning: Volume' 5
    amidi -p hw:VirMIDI,0 -S 'B0 15 50'
    wait_for "$FLLOG" "learned: 'Volume'" 5
  fi
  wait "$FLPID"; rc=$?
  exec 7>&-
  rm -f "$keys"
  if [[ $rc == 0 ]] && has "$FLLOG" "learned: 'Volume' ← CC 21 on channel 1" &&
    grep -q '^    source: { cc: 21 }       # the volume fader$' "$learn" && grep -q '^# VM learn: this comment must survive.$' "$learn" &&
    grep -q 'name: Volume            # learn binds this one' "$learn" && "$LIVE_CARILLON" mapping check "$learn" >/dev/null 2>&1
  then ok "learn on a terminal: 'l', then CC 21 on VirMIDI -> $(grep -o 'source: { cc: 21 }' "$learn") written, comments kept, mapping check passes"
  else bad "learn" "rc=$rc $(tr -d '\033' <"$FLLOG" | grep -aE 'learn|error' | tail -5 | tr '\n' ' ') | $(cat "$learn")"; fi
  echo "    ($(($(ms) - t)) ms)"

  # Hot reload, with audio: an organ note held by a Sustain button (CC 20 -> channel.1.cc.64).
  # A broken file keeps the old mapping (errors with file:line:column logged, CC 7 still works);
  # the fixed file drops the Sustain button: its release lets the organ stop; the new Pan (CC 10) works.
  t=$(ms)
  reload=$out/fl-reload.yaml
  v1='name: VM reload
channel: 1
controls:
  - name: Level
    kind: fader
    source: { cc: 7 }
    soft-takeover: false
    targets: [strip.1.gain]
  - name: Sustain
    kind: button
    source: { cc: 20 }
    targets: [channel.1.cc.64]'
  fl_save "$v1" "$reload"
  fl_audio reload 12 --mapping "$reload" --connect 24:0
  amidi -p hw:VirMIDI,0 -S 'C0 13'                     # church organ: sounds while held
  amidi -p hw:VirMIDI,0 -S 'B0 14 7F 90 3C 64'         # Sustain on, note on
  amidi -p hw:VirMIDI,0 -S '80 3C 00'                  # note off: the pedal holds it
  sleep 1
  fl_save "$v1
  - name: Broken
    kind: wobbler
    source: { cc: 21 }
    targets: [strip.1.pan]" "$reload"
  wait_for "$FLLOG" 'not reloaded' 5
  amidi -p hw:VirMIDI,0 -S 'B0 07 7F'                  # the old mapping still works
  wait_for "$FLLOG" 'parameter strip.1.gain = 6' 3
  sleep 2
  fl_save 'name: VM reload, fixed
channel: 1
controls:
  - name: Level
    kind: fader
    source: { cc: 7 }
    soft-takeover: false
    targets: [strip.1.gain]
  - name: Pan
    kind: knob
    source: { cc: 10 }
    soft-takeover: false
    targets: [strip.1.pan]' "$reload"
  wait_for "$FLLOG" 'mapping reloaded' 5
  amidi -p hw:VirMIDI,0 -S 'B0 0A 00'                  # the new binding
  wait "$FLPID"; rc=$?; kill -INT "$FLREC" 2>/dev/null; wait "$FLREC"
  hr=$("$probe" hold-release "$FLWAV" --held 3 --after 4); hrc=$?
  echo "    $hr"
  voices=$(fl_voices "$FLLOG")
  if [[ $rc == 0 && $hrc == 0 && $voices == 0 ]] && has "$FLLOG" "^$reload:14:11: error: unknown control kind 'wobbler'" &&
    has "$FLLOG" 'parameter strip.1.gain = 6' && has "$FLLOG" 'parameter channel.1.cc.64 = 0' && has "$FLLOG" 'parameter strip.1.pan = -1'
  then ok "hot reload: broken file kept the old mapping ($(grep -o "fl-reload.yaml:14:11: error: [^;]*" "$FLLOG" | head -1)), fixed one swapped in (Pan works), the held organ stopped ($hr; voices=$voices)"
  else bad "hot reload" "rc=$rc $hr voices=$voices $(grep -vE '^parameter (strip|channel.1.cc.7 )' "$FLLOG" | grep -E 'error|reload|parameter|voices' | tail -8 | tr '\n' ' ')"; fi
  echo "    ($(($(ms) - t)) ms)"

  # A scene switch while an organ chord is held: the notes started with the organ end at their note-offs.
  t=$(ms)
  cat >"$out/fl-scenes.yaml" <<'YAML'
name: VM scenes
channel: 1
controls:
  - name: Scene
    kind: selector
    source: { cc: 30 }
    values: [0, 1]
    targets: [scene.select]
scenes:
  - name: Piano
    channels: { 1: { bank: 0, program: 0 } }
  - name: Organ
    channels: { 1: { bank: 0, program: 19 } }
YAML
  fl_audio scenes 12 --mapping "$out/fl-scenes.yaml" --connect 24:0
  amidi -p hw:VirMIDI,0 -S 'B0 1E 7F'                  # scene Organ
  sleep 0.3
  amidi -p hw:VirMIDI,0 -S '90 30 64 90 37 64 90 3C 64'
  sleep 1.5
  amidi -p hw:VirMIDI,0 -S 'B0 1E 00'                  # scene Piano, chord still held
  sleep 2.5
  amidi -p hw:VirMIDI,0 -S '80 30 00 80 37 00 80 3C 00'
  wait "$FLPID"; rc=$?; kill -INT "$FLREC" 2>/dev/null; wait "$FLREC"
  hr=$("$probe" hold-release "$FLWAV" --held 3 --after 4); hrc=$?
  echo "    $hr"
  voices=$(fl_voices "$FLLOG")
  if [[ $rc == 0 && $hrc == 0 && $voices == 0 ]] && has "$FLLOG" 'parameter channel.1.program = 19' && has "$FLLOG" 'parameter channel.1.program = 0'
  then ok "scene switch Organ -> Piano while a chord is held: silence after the note-offs ($hr; voices=$voices)"
  else bad "scene switch with held notes" "rc=$rc $hr voices=$voices $(grep -E 'parameter|error' "$FLLOG" | tail -6 | tr '\n' ' ')"; fi
  echo "    ($(($(ms) - t)) ms)"
fi
