# The output outlives its device (issue 40): the loopback card's platform device unbound through
# sysfs while `live` plays (what unplugging a USB interface does: snd_pcm_writei fails with
# ENODEV), and bound again 3 s later. live says "no audio" once, stays up, reopens hw:Loopback,0
# (about once a second) and says when it is back; a click track sent after the return
# (aplaymidi, 16 woodblock notes 250 ms apart) is all in the capture taken after it. (Key 72 on
# channel 10, a long whistle, gave two onsets a note: 32 at 125 ms.) The spread allowed is loose
# (15 ms): the claim is that every note is there; a debug build under TCG gave 4.1 ms, the first
# clicks placed while the output clock learns the reopened device.
# Sourced by ../scenarios.sh (see README.md here).
if [[ -n ${LIVE_CARILLON:-} ]]; then
  t=$(ms)
  rate=${LIVE_RATE:-22050}
  aloop=/sys/bus/platform/drivers/snd_aloop
  dev=$(basename "$(ls -d "$aloop"/snd_aloop.* 2>/dev/null | head -1)")
  if [[ -z $dev || ! -w $aloop/unbind ]]; then
    bad "device return" "no snd_aloop platform device to unbind under $aloop"
  else
    clicks=$out/return-clicks.mid
    "$probe" metronome "$clicks" --interval 0.25 --seconds 4 >"$out/return-clicks.log" 2>&1 \
      || bad "device return: click file" "$(cat "$out/return-clicks.log")"
    log=$out/return-live.log
    "$LIVE_CARILLON" live -v -d hw:Loopback,0 -r "$rate" --period 512 --periods 8 --soundfont "$LIVE_SF2" --duration 120 \
      >"$log" 2>&1 & lpid=$!
    wait_for "$log" 'MIDI in at' 30
    sleep 2
    echo "$dev" >"$aloop/unbind"
    wait_for "$log" '^no audio:' 15; said=$?
    sleep 3
    alive=yes; kill -0 "$lpid" 2>/dev/null || alive=no
    echo "$dev" >"$aloop/bind"; t_bind=$(ms)
    wait_for "$log" '^audio back after' 30; back=$?
    backms=$(($(ms) - t_bind))
    "${ARECORD[@]}" -q -D hw:Loopback,1 -f FLOAT_LE -r "$rate" -c 2 -d 20 "$out/return.wav" & rec=$!
    sleep 1
    aplaymidi -p carillon:0 "$clicks"; arc=$?
    sleep 1
    kill -INT "$rec" 2>/dev/null; wait "$rec"
    kill -INT "$lpid"; wait "$lpid"; lrc=$?
    onsets=$("$probe" onsets "$out/return.wav" --interval 0.25 --min-count 16 --max-std 15); orc=$?
    echo "MEASURE device return: reopened ${backms} ms after the bind; $onsets"
    grep -E '^(no audio|audio back)' "$log" | sed 's/^/    /'
    if [[ $said == 0 && $alive == yes && $back == 0 && $arc == 0 && $lrc == 0 && $orc == 0 ]]; then
      ok "device return: live outlived hw:Loopback,0 unbound and bound 3 s later (back ${backms} ms after the bind), every click after it captured ($onsets)"
    else bad "device return" "said=$said alive=$alive back=$back aplaymidi=$arc live=$lrc onsets: $onsets; $(grep -v '^parameter' "$log" | tail -6 | tr '\n' ' ')"; fi
  fi
  echo "    ($(($(ms) - t)) ms)"
fi
