# What the JACK scripts (test-jack, test-jack-restart, test-jack-sync, test-link) set up the
# same way; sourced by them, never run. After `jack_test_setup NAME`:
#   $out         a fresh folder for logs and captures, removed at exit unless a check failed;
#   ok, bad      print an ok/FAIL line (bad counts it in $failures);
#   pids         the script's background processes, killed and waited for at exit (with the
#                server); a script with more to do first defines `before_cleanup`;
#   JACK_DEFAULT_SERVER  carillon-NAME-PID-RANDOM: a name of this run's own, so parallel runs,
#                other engineers' and a user's server never meet.
# build_products P…: builds the products (CARILLON_BUILD_FLAGS: scripts/test's; unset, the debug
#   build), sets $bin, or fails the script.
# start_jackd PERIOD: a server of this run's (dummy driver, 48 kHz, PERIOD frames, no sound
#   card needed), $server_pid; waits up to 15 s for its ports, else fails the script.
#   back_at: when it took clients (epoch seconds). kill_jackd: SIGTERM, and waits for it.

build_products() {
  local product
  for product in "$@"; do
    # shellcheck disable=SC2086  # CARILLON_BUILD_FLAGS: words on purpose
    swift build ${CARILLON_BUILD_FLAGS:-} --product "$product" >/dev/null 2>&1 || { echo "FAIL: build $product"; exit 1; }
  done
  # shellcheck disable=SC2086
  bin=$(swift build ${CARILLON_BUILD_FLAGS:-} --show-bin-path)
}

jack_test_setup() {
  out=$(mktemp -d "${TMPDIR:-/tmp}/carillon-$1.XXXXXX")
  failures=0
  pids=()
  server_pid=
  export JACK_DEFAULT_SERVER=carillon-$1-$$-$RANDOM
  trap jack_test_cleanup EXIT
}

ok() { echo "ok   $1"; }
bad() { echo "FAIL $1: $2"; failures=$((failures + 1)); }

jack_test_cleanup() {
  if declare -F before_cleanup >/dev/null; then before_cleanup; fi
  local pid
  for pid in "${pids[@]}" $server_pid; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}" $server_pid; do wait "$pid" 2>/dev/null; done
  # What a client of a killed server leaves (its semaphore; Carillon abandons such a client, as
  # libjack crashes closing it): this run's server name only.
  rm -f /dev/shm/jack_sem.0_"$JACK_DEFAULT_SERVER"_* /dev/shm/jack_"$JACK_DEFAULT_SERVER"_*
  if ((failures == 0)); then rm -rf "$out"; else echo "logs and captures kept in $out"; fi
}

start_jackd() {
  jackd -n "$JACK_DEFAULT_SERVER" -d dummy -r 48000 -p "$1" >>"$out/jackd.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 300); do jack_lsp system:playback_1 2>/dev/null | grep -q playback_1 && break; sleep 0.05; done
  jack_lsp system:playback_1 2>/dev/null | grep -q playback_1 || { bad "jackd" "did not start: $(tail -5 "$out/jackd.log")"; exit 1; }
  back_at=$(date +%s.%N)
}

# SIGTERM: the server goes at once and its clients see jack_on_shutdown, as with a crash. Not
# SIGKILL: jackd2 then leaves its slot in /dev/shm/jack-shm-registry taken (8 in all, and a
# recycled pid keeps a dead one "alive"), and after a few runs no server starts on the machine.
kill_jackd() { kill -TERM "$server_pid"; wait "$server_pid" 2>/dev/null; server_pid=; }
