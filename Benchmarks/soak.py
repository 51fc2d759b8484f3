#!/usr/bin/env python3
"""Soak: `carillon live -a jack` through the stage-piano rig for many minutes, with a fault
every segment (issue 40). Not part of CI: `Benchmarks/soak.sh` runs it; figures go to
Benchmarks/README.md.

Segments follow each other until --minutes are up. Per segment (3 minutes by default) a JACK
client (`carillon-jack-probe`) plays a random performance into carillon:midi_in and records
carillon's output: keys over the whole keyboard (so every zone: bass, piano + strings, the external synth port), the sustain pedal, scene
switches (program changes on channel 16) and the three faders (CC 20-22 on channel 16). Beside
it, an OSC client sends strip gains, a CC, scene switches and notes, and a WebSocket client
(the page's protocol) moves a fader and reads the status. Halfway through each segment a fault,
in turn:
  - restart: the JACK server killed (SIGTERM, as a crash looks to its clients) and started again
    3 s later; the probe dies with the server, the next segment starts once carillon is back;
  - stall: carillon stopped (SIGSTOP) for 1.5 s, then ten times for 250 ms, 250 ms apart.
(Unbinding a sound card's device needs the ALSA VM: `Tests/ALSAIntegration/scenarios.d/device-return.sh`.)

Measured: RSS (VmRSS, every 5 s) at the start of each segment and at the end; stuck notes
(the web status's voice count and the recording's level once every key and pedal is up, and,
after a restart, the recording before the next segment's first note); faults survived (the
process alive and sounding after each); the time from the server's return to carillon's
ports and to its audio (the status's `audio` field cleared).
"""
import argparse
import base64
import json
import math
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time


def stuck(row):
    """Something still sounds after the performance's end and does not die away: every key
    and the pedal went up at its last event, so reverb and release tails fall by far more than
    6 dB from 1-2 s after it to 3-4 s after it (to digital silence, on a quiet run); a held
    note (soft strings: -65 dBFS with FluidR3) stays level, a held piano falls slower."""
    if "end_db" not in row:
        return False
    return row["end_db"] > -90 and row["end_db"] > row["earlier_db"] - 6


def now():
    return time.monotonic()


# --- OSC (the few messages sent here; liblo's own tools are too slow to start per message) ----------------
def osc_pad(b):
    return b + b"\0" * (4 - len(b) % 4)


def osc_message(address, *args):
    tags, payload = ",", b""
    for a in args:
        if isinstance(a, float):
            tags += "f"; payload += struct.pack(">f", a)
        elif isinstance(a, int):
            tags += "i"; payload += struct.pack(">i", a)
        else:
            tags += "s"; payload += osc_pad(a.encode())
    return osc_pad(address.encode()) + osc_pad(tags.encode()) + payload


# --- A WebSocket client of the page's protocol (RFC 6455, text frames, client frames masked) --------------
class WebClient:
    def __init__(self, port):
        self.port, self.sock, self.status, self.messages, self.ended = port, None, {}, 0, None
        self.lock = threading.Lock()

    def connect(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(1)
            if not chunk:
                raise OSError("web surface closed the upgrade")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise OSError(f"web surface refused: {head.splitlines()[0]!r}")
        s.settimeout(None)
        self.sock = s

    def send(self, obj):
        self._send_frame(0x1, json.dumps(obj).encode())

    def _send_frame(self, opcode, data):
        mask, n = os.urandom(4), len(data)
        head = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n))
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        with self.lock:
            self.sock.sendall(head + mask + body)

    def _exactly(self, n):
        b = b""
        while len(b) < n:
            chunk = self.sock.recv(n - len(b))
            if not chunk:
                raise OSError("closed")
            b += chunk
        return b

    def read_forever(self):
        """Reads until the connection ends: text messages (a fragmented one put together), pings answered."""
        message = b""
        try:
            while True:
                h = self._exactly(2)
                n = h[1] & 0x7F
                if n == 126:
                    n = struct.unpack(">H", self._exactly(2))[0]
                elif n == 127:
                    n = struct.unpack(">Q", self._exactly(8))[0]
                payload, opcode, final = self._exactly(n), h[0] & 0x0F, h[0] & 0x80
                if opcode == 9:
                    self._send_frame(0xA, payload)
                    continue
                if opcode == 8:
                    break
                if opcode in (0, 1):
                    message += payload
                    if final:
                        m = json.loads(message)
                        message = b""
                        self.messages += 1
                        if m.get("type") == "status":
                            self.status = m
        except (OSError, ValueError) as e:
            self.ended = repr(e)


# --- The performance: a Standard MIDI File through midicsv's csvmidi -------------------------------------
def performance(rng, seconds, path):
    """Random keys (channel 1, the rig's keyboard channel), pedal, scene switches and faders
    (channel 16); every key and the pedal up 5 s before the end. Returns the note count."""
    tpq, per_second = 480, 960  # 120 BPM
    events, notes, end = [], 0, seconds - 5.0
    t = 0.0
    while t < end - 0.1:
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            key, length = rng.randint(28, 100), rng.uniform(0.05, 1.5)
            off = min(t + length, end)
            events.append((t, f"Note_on_c, 0, {key}, {rng.randint(20, 127)}"))
            events.append((off, f"Note_off_c, 0, {key}, 0"))
            notes += 1
        t += rng.expovariate(6.0)
    t = rng.uniform(0, 3)
    while t < end - 1:
        events.append((t, "Control_c, 0, 64, 127"))
        events.append((min(t + rng.uniform(0.5, 4), end), "Control_c, 0, 64, 0"))
        t += rng.uniform(3, 8)
    t = rng.uniform(5, 15)
    while t < end:
        events.append((t, f"Program_c, 15, {rng.randint(0, 1)}"))
        t += rng.uniform(10, 25)
    t = 0.5
    while t < end:
        events.append((t, f"Control_c, 15, {rng.choice([20, 21, 22])}, {rng.randint(60, 127)}"))
        t += rng.uniform(0.5, 2)
    events.append((end, "Control_c, 0, 64, 0"))
    rows = ["0, 0, Header, 1, 1, %d" % tpq, "1, 0, Start_track", "1, 0, Tempo, 500000"]
    # Offs before ons at the same tick (a repeated key is let go, then struck).
    for when, what in sorted(events, key=lambda e: (round(e[0] * per_second), "on" in e[1])):
        rows.append(f"1, {round(when * per_second)}, {what}")
    rows += [f"1, {round(seconds * per_second)}, End_track", "0, 0, End_of_file"]
    subprocess.run(["csvmidi", "-", path], input="\n".join(rows) + "\n", text=True, check=True)
    return notes


def rms_db(path, start, stop):
    data = open(path, "rb").read()
    pos, rate, samples = 12, 48000, b""
    while pos + 8 <= len(data):
        kind, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        if kind == b"fmt ":
            rate = struct.unpack("<I", data[pos + 12:pos + 16])[0]
        if kind == b"data":
            samples = data[pos + 8:pos + 8 + size]
        pos += 8 + size + (size & 1)
    x = memoryview(samples[:len(samples) // 4 * 4]).cast("f")
    a, b = max(0, int(start * rate) * 2), max(0, int(stop * rate) * 2)
    part = x[a:b] if b > 0 else x[a + len(x) if a < 0 else a:]
    power = sum(v * v for v in part) / max(1, len(part))
    return 10 * math.log10(power) if power > 0 else -200.0


def seconds_of(path):
    return os.path.getsize(path) / (48000 * 2 * 4)


def free_port(kind):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def rss_mib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None


def ports_listed(port):
    r = subprocess.run(["jack_lsp", port], capture_output=True, text=True)
    return port in r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--carillon", required=True)
    ap.add_argument("--probe", required=True)
    ap.add_argument("--mapping", required=True)
    ap.add_argument("--soundfont", default="/usr/share/sounds/sf2/FluidR3_GM.sf2")
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--segment", type=float, default=180)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--faults", default="restart,stall", help="in turn, one a segment: restart, stall, none")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    server = f"carillon-soak-{os.getpid()}"
    env = dict(os.environ, JACK_DEFAULT_SERVER=server)
    os.environ["JACK_DEFAULT_SERVER"] = server
    jackd = None

    def start_server():
        nonlocal jackd
        jackd = subprocess.Popen(["jackd", "-n", server, "-d", "dummy", "-r", "48000", "-p", "256"],
                                 stdout=open(f"{a.out}/jackd.log", "a"), stderr=subprocess.STDOUT, env=env)
        for _ in range(300):
            if ports_listed("system:playback_1"):
                return now()
            time.sleep(0.05)
        sys.exit("soak: jackd did not start")

    def stop_server():
        nonlocal jackd
        jackd.terminate(); jackd.wait(); jackd = None

    start_server()
    osc_port, web_port = free_port(socket.SOCK_DGRAM), free_port(socket.SOCK_STREAM)
    live = subprocess.Popen([a.carillon, "live", "-a", "jack", "--mapping", a.mapping, "--soundfont", a.soundfont,
                             "--osc", f"127.0.0.1:{osc_port}", "--web", f"127.0.0.1:{web_port}", "-v"],
                            stdout=open(f"{a.out}/live.out", "w"), stderr=open(f"{a.out}/live.err", "w"), env=env)
    for _ in range(600):
        if ports_listed("carillon:out_1"):
            break
        time.sleep(0.05)
    else:
        sys.exit(f"soak: carillon did not come up: {open(a.out + '/live.err').read()[-2000:]}")
    web = WebClient(web_port)
    for _ in range(100):
        try:
            web.connect(); break
        except OSError:
            time.sleep(0.1)
    threading.Thread(target=web.read_forever, daemon=True).start()

    stop = threading.Event()
    # Cleared while the level is checked for held notes: the OSC client's notes wait.
    notes_allowed = threading.Event()
    sent = {"osc": 0, "web": 0}
    rss_samples = []

    def osc_loop():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        r = random.Random(a.seed + 1)
        while not stop.is_set():
            k = r.random()
            if k < 0.4:
                m = osc_message(f"/carillon/strip/{r.randint(1, 3)}/gain", r.uniform(-12, 0))
            elif k < 0.7:
                m = osc_message("/carillon/channel/1/cc/74", r.randint(0, 127))
            elif k < 0.75:
                m = osc_message("/carillon/scene", r.randint(0, 1))
            elif notes_allowed.is_set():
                key = r.randint(40, 90)
                s.sendto(osc_message("/carillon/note", 3, key, r.randint(30, 100)), ("127.0.0.1", osc_port))
                time.sleep(0.1)
                m = osc_message("/carillon/note", 3, key, 0)
                sent["osc"] += 1
            else:
                continue
            s.sendto(m, ("127.0.0.1", osc_port)); sent["osc"] += 1
            time.sleep(0.05)

    def web_loop():
        r = random.Random(a.seed + 2)
        while not stop.is_set():
            try:
                web.send({"type": "control", "name": r.choice(["Piano level", "Bass level", "Strings level"]),
                          "value": r.uniform(-12, 0)})
                sent["web"] += 1
            except OSError:
                pass
            time.sleep(0.5)

    def rss_loop():
        while not stop.is_set():
            v = rss_mib(live.pid)
            if v is not None:
                rss_samples.append((now(), v))
            time.sleep(5)

    for f in (osc_loop, web_loop, rss_loop):
        threading.Thread(target=f, daemon=True).start()

    began = now()
    rows, faults = [], a.faults.split(",")
    # Segments until the time is up (a restart's segment ends at the restart, so a count of
    # segments would stop short of --minutes): start one only if most of it fits.
    lead = 1.5
    after_restart = False
    i = -1
    while i < 0 or now() - began < a.minutes * 60 - a.segment / 2:
        i += 1
        fault = faults[i % len(faults)]
        mid = f"{a.out}/segment-{i}.mid"
        wav = f"{a.out}/segment-{i}.wav"
        length = a.segment - lead - 3
        notes = performance(rng, length, mid)
        rss_start = rss_mib(live.pid)
        seg_began = now()
        probe = subprocess.Popen([a.probe, "play", mid, "--record", wav, "--from", "carillon:out_1", "--from", "carillon:out_2",
                                  "--to", "carillon:midi_in", "--lead", str(lead), "--tail", "5", "--wait", "20"],
                                 stdout=open(f"{a.out}/probe-{i}.out", "w"), stderr=subprocess.STDOUT, env=env)
        row = {"segment": i, "fault": fault, "notes": notes, "rss_start_mib": rss_start}
        # The OSC notes wait past the probe's lead, counted from when its recording starts (the
        # "connected" line, printed as it starts): counted from its start, a probe slow to start under
        # load (1.06 s seen at load 25) let them into the silence measured before its first note.
        for _ in range(400):
            with open(f"{a.out}/probe-{i}.out") as f:
                if "connected after" in f.read():
                    break
            time.sleep(0.05)
        time.sleep(lead + 0.5)
        notes_allowed.set()
        time.sleep(length / 2)
        if fault == "restart":
            stop_server()
            probe.kill(); probe.wait()
            notes_allowed.clear()
            time.sleep(3)
            back = start_server()
            ready = audio = None
            while now() - back < 30 and (ready is None or audio is None):
                if ready is None and ports_listed("carillon:out_1"):
                    ready = now() - back
                st = web.status
                if audio is None and ready is not None and "audio" not in st and st.get("blocks") is not None:
                    audio = now() - back
                time.sleep(0.02)
            row.update(ports_back_s=ready, audio_back_s=audio)
            after_restart = True
        else:
            if fault == "stall":
                live.send_signal(signal.SIGSTOP); time.sleep(1.5); live.send_signal(signal.SIGCONT)
                for _ in range(10):
                    time.sleep(0.25)
                    live.send_signal(signal.SIGSTOP); time.sleep(0.25); live.send_signal(signal.SIGCONT)
            # The performance lets every key and the pedal go 5 s before its end: quiet from then.
            time.sleep(max(0, seg_began + lead + length - 7 - now()))
            notes_allowed.clear()
            probe.wait()
            time.sleep(0.5)
            # Every key and the pedal went up 6 s ago. The voice count is not a stuck-note count:
            # FluidSynth keeps a released voice of a looped sample (TimGM6mb's and FluidR3's
            # strings) active at -160 dB, as `fluidsynth -F` does; the level says what sounds.
            row["end_voices"] = web.status.get("voices")
            if os.path.exists(wav) and seconds_of(wav) > 4:
                # The performance's last event (every key and the pedal up) is at length - 5 s.
                release = lead + length - 5
                row["end_db"] = round(rms_db(wav, release + 3, release + 4), 1)
                row["earlier_db"] = round(rms_db(wav, release + 1, release + 2), 1)
                row["middle_db"] = round(rms_db(wav, lead + 5, lead + length / 2 - 1), 1)
        if i > 0 and rows[-1]["fault"] == "restart" and os.path.exists(wav):
            # Before this segment's first note: nothing held over the restart may sound.
            row["before_first_note_db"] = round(rms_db(wav, 0.2, lead - 0.5), 1)
            row["middle_db"] = round(rms_db(wav, lead + 5, lead + length / 2 - 1), 1)
        row["alive"] = live.poll() is None
        row["seconds"] = round(now() - seg_began, 1)
        rows.append(row)
        print(json.dumps(row), flush=True)
        if not row["alive"]:
            break
        if fault != "restart":
            time.sleep(max(0, a.segment - (now() - seg_began)))
    stop.set()
    rss_end = rss_mib(live.pid)
    live.send_signal(signal.SIGINT)
    try:
        rc = live.wait(20)
    except subprocess.TimeoutExpired:
        live.kill(); rc = "hung"
    stop_server()
    first = [v for t, v in rss_samples if t - began > 60]
    summary = {
        "minutes": round((now() - began) / 60, 1), "segments": len(rows), "notes_keyboard": sum(r["notes"] for r in rows),
        "osc_messages": sent["osc"], "web_messages": sent["web"], "web_messages_read": web.messages, "web_connection_ended": web.ended,
        "rss_first_minute_mib": round(first[0], 1) if first else None, "rss_end_mib": rss_end and round(rss_end, 1),
        "rss_max_mib": round(max(v for _, v in rss_samples), 1) if rss_samples else None,
        "faults_tried": len(rows), "faults_survived": sum(1 for r in rows if r["alive"]),
        "segments_with_a_stuck_note": sum(1 for r in rows if stuck(r)),
        "end_voices_max": max((r.get("end_voices") or 0 for r in rows), default=None),
        "end_db_max": max((r["end_db"] for r in rows if "end_db" in r), default=None),
        "end_fall_db_min": min((r["earlier_db"] - r["end_db"] for r in rows if "end_db" in r), default=None),
        "after_restart_db_max": max((r["before_first_note_db"] for r in rows if "before_first_note_db" in r), default=None),
        "ports_back_s": [round(r["ports_back_s"], 2) for r in rows if r.get("ports_back_s") is not None],
        "audio_back_s": [round(r["audio_back_s"], 2) for r in rows if r.get("audio_back_s") is not None],
        "exit": rc,
    }
    print(json.dumps(summary), flush=True)
    json.dump({"segments": rows, "summary": summary}, open(f"{a.out}/soak.json", "w"), indent=1)


if __name__ == "__main__":
    main()
