# An LV2 instrument and effect played live: aplaymidi FAST.mid -> Midi Through -> carillon live with a
# mapping file giving channel N mda EPiano (`lv2:`) and mda Delay on its strip (`inserts:`) (N the busiest
# melodic channel, every other channel muted) -> hw:Loopback,0 -> arecord. The capture must match an
# offline `carillon render` with the same plugins given by flags (--instrument, --insert; energy
# envelopes), and the render thread keeps its real-time rules with the plugins in it (rtcheck.c, as in
# the live scenario). At the end, --plugin-state writes both plugins' states.
if [[ -n ${LIVE_CARILLON:-} ]]; then
  rate=${LIVE_RATE:-22050}
  t=$(ms)
  channel=$(midicsv "$fastmid" | awk -F', ' '$3 == "Note_on_c" && $6 > 0 && $4 != 9 { n[$4]++ }
    END { best = -1; for (c in n) if (best < 0 || n[c] > n[best]) best = c; print best + 1 }')
  epiano=http://drobilla.net/plugins/mda/EPiano delay=http://drobilla.net/plugins/mda/Delay
  mutes=()
  for c in $(seq 1 16); do [[ $c != "$channel" ]] && mutes+=(--set "strip.$c.mute=1"); done
  printf 'channels:\n  %s: { lv2: "%s" }\ninserts:\n  %s: ["%s"]\ncontrols: []\n' "$channel" "$epiano" "$channel" "$delay" \
    >"$out/plugin-mapping.yaml"
  if "$LIVE_CARILLON" render "$fastmid" --instrument "$channel=$epiano" --insert "$channel=$delay" "${mutes[@]}" \
      -o "$out/plugin-render.wav" -r "$rate" --soundfont "$LIVE_SF2" -q >"$out/plugin-render.log" 2>&1; then
    LIVE_PRELOAD=${RTCHECK:-} live_run plugin 14 --connect "midi through" --mapping "$out/plugin-mapping.yaml" "${mutes[@]}" \
      --plugin-state "$out/plugin-state"
    aplaymidi -p 14:0 "$fastmid"; arc=$?
    live_end
    sed 's/^/    /' "$LIVELOG" | grep -v '^    parameter' | tail -3
    env=$("$probe" envelope "$out/live-plugin.wav" "$out/plugin-render.wav" --max-lag 10 --min-correlation 0.8); erc=$?
    rt=$(grep '^rtcheck:' "$LIVELOG" | tail -1)
    others=$(grep -o '\[[^]]*\]' <<<"$rt" | grep -v libfluidsynth)
    rtok=1
    if [[ -n ${RTCHECK:-} ]]; then
      [[ -n $rt ]] && grep -q ' allocations=0 ' <<<"$rt" && grep -q ' locks=0 lock-waits=0' <<<"$rt" && [[ -z $others ]] || rtok=0
    fi
    state=$out/plugin-state/plugin.$channel.ttl   # written at the end of the session
    if [[ $LIVERC == 0 && $arc == 0 && $erc == 0 && $rtok == 1 ]] && grep -q "xruns=0 " <<<"$(summary)" \
        && grep -q 'lv2:symbol "hardness"' "$state" 2>/dev/null \
        && grep -q 'lv2:symbol "feedback"' "$out/plugin-state/insert.$channel.1.ttl" 2>/dev/null; then
      ok "live, mapping: channel $channel lv2: mda EPiano, inserts: mda Delay (other channels muted): capture vs offline render with --instrument/--insert $env, $(summary | cut -d' ' -f1-2)${rt:+, $(cut -d' ' -f3- <<<"$rt")}; --plugin-state wrote $(basename "$state") and insert.$channel.1.ttl"
    else bad "live with a mapping's lv2: and inserts:" "live rc=$LIVERC aplaymidi rc=$arc $env $(summary) ${rt:-no rtcheck line} state: $(ls "$out/plugin-state" 2>&1 | tr '\n' ' ')"; fi
  else bad "render --instrument --insert" "$(tail -3 "$out/plugin-render.log")"; fi
  echo "    ($(($(ms) - t)) ms)"
fi
