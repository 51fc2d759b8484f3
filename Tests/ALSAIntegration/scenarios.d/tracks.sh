# Audio-file tracks: `carillon play FAST.mid --track drums.wav --record` sounds on hw:Loopback,0;
# the loopback capture, the --record file and an offline `carillon render --track` must match
# (energy envelopes, as the play scenario compares them). drums.wav is made here: decaying
# noise bursts twice a second at 44.1 kHz, so the track is also resampled to the live rate.
if [[ -n ${LIVE_CARILLON:-} ]]; then
  rate=${LIVE_RATE:-22050}
  drums=$out/drums.wav
  python3 - "$drums" <<'PY'
import random, struct, sys, wave
rate, seconds = 44100, 12
random.seed(7)
with wave.open(sys.argv[1], "wb") as w:
    w.setnchannels(2); w.setsampwidth(2); w.setframerate(rate)
    frames = bytearray()
    for i in range(rate * seconds):
        t = (i % (rate // 2)) / rate            # a hit every 0.5 s, decaying over ~60 ms
        v = int(12000 * random.uniform(-1, 1) * pow(2.718, -t / 0.06))
        frames += struct.pack("<hh", v, v)
    w.writeframes(bytes(frames))
PY
  t=$(ms)
  if "$LIVE_CARILLON" render "$fastmid" --track "$drums" -o "$out/tracks-render.wav" -r "$rate" --soundfont "$LIVE_SF2" -q \
      >"$out/tracks-render.log" 2>&1; then
    TRACKLOG=$out/tracks-play.log
    "${ARECORD[@]}" -q -D hw:Loopback,1 -f FLOAT_LE -r "$rate" -c 2 -d 25 "$out/tracks-capture.wav" & RECPID=$!
    sleep 0.3
    # --no-channel-effects: 16 reverbs fill most of a period on the emulated CPU; the track is what is tested.
    "$LIVE_CARILLON" play "$fastmid" --track "$drums" -d hw:Loopback,0 -r "$rate" --period 512 --periods 8 --no-channel-effects \
      --soundfont "$LIVE_SF2" --record "$out/tracks-rec.wav" --record-bits 32 >"$TRACKLOG" 2>&1; rc=$?
    kill -INT "$RECPID" 2>/dev/null; wait "$RECPID"
    renv=$("$probe" envelope "$out/tracks-rec.wav" "$out/tracks-render.wav" --max-lag 10 --min-correlation 0.9); rerc=$?
    cenv=$("$probe" envelope "$out/tracks-capture.wav" "$out/tracks-rec.wav" --max-lag 10 --min-correlation 0.8); cerc=$?
    echo "    recording vs render: $renv | capture vs recording: $cenv"
    if [[ $rc == 0 && $rerc == 0 && $cerc == 0 ]] && ! grep -q 'track-underruns=' "$TRACKLOG" \
        && grep -q 'recorded .*tracks-rec.wav: [0-9]* blocks, none dropped' "$TRACKLOG"; then
      ok "play --track drums.wav --record: the recording matches the offline render with the track ($renv) and the loopback capture ($cenv); no track underrun"
    else bad "play --track" "rc=$rc $renv | $cenv | $(grep -v '^parameter' "$TRACKLOG" | tail -4)"; fi
  else bad "render --track" "$(tail -3 "$out/tracks-render.log")"; fi
  echo "    ($(($(ms) - t)) ms)"
fi
