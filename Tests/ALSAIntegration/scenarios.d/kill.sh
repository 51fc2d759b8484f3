# A sending client killed (kill -9) while it holds an organ chord with the pedal down: live
# releases what it held (its log says so) and the capture falls silent after the release. The
# organ is not among the presets the rig names at start, so with presets on demand its program
# change waits for its samples and the chord with it (CI, stop 44: the chord once played on the
# channel's previous preset). Where the release is, the capture says (`--find-release`): the
# script's `sleep 4` ran up to 5.3 s under TCG.
# Sourced by ../scenarios.sh (see README.md here).
if [[ -n ${LIVE_CARILLON:-} ]]; then
  t=$(ms)
  live_run kill 12 --autoconnect
  "$probe" send --name organist --notes 48,55,60,64 --program 19 --sustain --hold >"$out/organist.log" 2>&1 & spid=$!
  wait_for "$LIVELOG" "autoconnected .*'organist'" 10
  sleep 4
  kill -KILL $spid; wait $spid 2>/dev/null
  live_end
  hr=$("$probe" hold-release "$out/live-kill.wav" --held 4 --after 1 --find-release); hrc=$?
  echo "    $hr"
  if [[ $LIVERC == 0 && $hrc == 0 ]] && grep -q 'disconnected .*notes released' "$LIVELOG"
  then ok "live: kill -9 of a client holding an organ chord + pedal -> silence after release ($hr)"
  else bad "live kill" "rc=$LIVERC $hr $(grep -v '^parameter' "$LIVELOG" | tail -5)"; fi
  echo "    ($(($(ms) - t)) ms)"
fi
