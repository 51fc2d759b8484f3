# An LV2 instrument played live: aplaymidi FAST.mid -> Midi Through -> carillon live --instrument N=mda EPiano
# (N the busiest melodic channel, every other channel muted) -> hw:Loopback,0 -> arecord. The capture must
# match an offline `carillon render` with the same flags (energy envelopes), and the render thread keeps
# its real-time rules with the plugin in it (rtcheck.c, as in the live scenario). At the end, --plugin-state
# writes the plugin's state.
if [[ -n ${LIVE_CARILLON:-} ]]; then
  rate=${LIVE_RATE:-22050}
  t=$(ms)
  channel=$(midicsv "$fastmid" | awk -F', ' '$3 == "Note_on_c" && $6 > 0 && $4 != 9 { n[$4]++ }
    END { best = -1; for (c in n) if (best < 0 || n[c] > n[best]) best = c; print best + 1 }')
  flags=(--instrument "$channel=http://drobilla.net/plugins/mda/EPiano")
  for c in $(seq 1 16); do [[ $c != "$channel" ]] && flags+=(--set "strip.$c.mute=1"); done
  if "$LIVE_CARILLON" render "$fastmid" "${flags[@]}" -o "$out/plugin-render.wav" -r "$rate" --soundfont "$LIVE_SF2" -q \
      >"$out/plugin-render.log" 2>&1; then
    LIVE_PRELOAD=${RTCHECK:-} live_run plugin 14 --connect "midi through" "${flags[@]}" --plugin-state "$out/plugin-state"
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
        && grep -q 'lv2:symbol "hardness"' "$state" 2>/dev/null; then
      ok "live --instrument $channel=mda EPiano (other channels muted): capture vs offline render $env, $(summary | cut -d' ' -f1-2)${rt:+, $(cut -d' ' -f3- <<<"$rt")}; --plugin-state wrote $(basename "$state")"
    else bad "live --instrument" "live rc=$LIVERC aplaymidi rc=$arc $env $(summary) ${rt:-no rtcheck line} state: $(ls "$out/plugin-state" 2>&1 | tr '\n' ' ')"; fi
  else bad "render --instrument" "$(tail -3 "$out/plugin-render.log")"; fi
  echo "    ($(($(ms) - t)) ms)"
fi
