"""Browser tests of the web surface: a real Chromium (headless), a real WebSocket.

Each test starts carillon-web-probe (a WebSurface over a ControlHub loaded from a
mapping, fed CCs on stdin) and opens its page. Prints one line per test and
"N passed, N failed" at the end.
"""
import glob
import os
import shutil
import subprocess
import tempfile
import sys
import time
import traceback

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

PROBE = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/carillon-web-probe"
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NANO = os.path.join(ROOT, "mappings", "korg-nanokontrol2.yaml")
AKAI = os.path.join(ROOT, "mappings", "akai-mpk-mini-mk3.yaml")
STAGE = os.path.join(ROOT, "mappings", "stage-piano.yaml")
FLUID = "/usr/share/sounds/sf2/FluidR3_GM.sf2"


class Probe:
    def __init__(self, mapping, soundfont=None):
        self.proc = subprocess.Popen([PROBE, mapping] + ([soundfont] if soundfont else []), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        first = self.proc.stdout.readline().split()
        assert first and first[0] == "listening", f"probe did not start: {first}"
        self.url = f"http://127.0.0.1:{first[1]}/"

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def close(self):
        try:
            self.ask("quit")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def browser(width=1280, height=800, mobile=False, extra=()):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--hide-scrollbars", *extra):
        options.add_argument(arg)
    if mobile:
        options.add_experimental_option("mobileEmulation", {
            "deviceMetrics": {"width": width, "height": height, "pixelRatio": 2, "touch": True}})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait(condition, what, seconds=5.0):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def open_page(driver, url):
    driver.get(url)
    wait(lambda: driver.execute_script("return !!(window.carillon && window.carillon.hello)"), "the hello message")


def widget(driver, name):
    return driver.execute_script(
        "const w=window.carillon.widgets.get(arguments[0]);"
        "return w?{value:w.state.value,position:w.state.position,display:w.state.display}:null", name)


def test_page_shows_every_control_of_each_mapping(driver):
    mappings = sorted(glob.glob(os.path.join(ROOT, "mappings", "*.yaml")))
    assert len(mappings) >= 4, mappings
    for mapping in mappings:
        probe = Probe(mapping)
        try:
            expected = []
            probe.proc.stdin.write("states\n")
            probe.proc.stdin.flush()
            while (line := probe.proc.stdout.readline().rstrip("\n")) != "end":
                name, _, display = line.split("\t")
                expected.append((name, display))
            open_page(driver, probe.url)
            shown = driver.execute_script(
                "return [...document.querySelectorAll('.group .w')].map(e=>"
                "[e.dataset.control, e.querySelector('.value').textContent, e.offsetWidth>0&&e.offsetHeight>0])")
            name = os.path.basename(mapping)
            # An xy pad's parts (x, y, touch) are one widget named for the pad.
            pads = dict(driver.execute_script(
                "return window.carillon.hello.controls.filter(c=>c.pad).map(c=>[c.name,c.pad])"))
            expected = sorted({(pads[n], None) if n in pads else (n, d) for n, d in expected})
            shown_ = sorted((n, None if n in pads.values() else d) for n, d, _ in shown)
            assert shown_ == expected, f"{name}: {shown_[:3]} vs {expected[:3]}"
            assert all(visible for _, _, visible in shown), f"{name}: a widget has no size"
            # Each group on the page holds the hello's controls for it, in its order.
            groups = driver.execute_script(
                "return [...document.querySelectorAll('.group')].map(g=>[g.dataset.group,"
                "[...g.querySelectorAll('.w')].map(w=>w.dataset.control)])")
            hello = driver.execute_script(
                "const pad=new Map(window.carillon.hello.controls.filter(c=>c.pad).map(c=>[c.name,c.pad]));"
                "return window.carillon.hello.groups.map(g=>[g.name,[...new Set(g.controls.map(n=>pad.get(n)||n))]])")
            assert sorted(map(tuple, map(lambda g: (g[0], tuple(g[1])), groups))) == \
                sorted(map(lambda g: (g[0], tuple(g[1])), hello)), f"{name}: {groups[:2]} vs {hello[:2]}"
        finally:
            probe.close()


def test_dragging_a_fader_changes_the_parameter(driver):
    probe = Probe(NANO)
    try:
        open_page(driver, probe.url)
        before = float(probe.ask("value strip.1.gain"))
        track = driver.find_element(By.CSS_SELECTOR, '.w[data-control="Fader 1"] .track')
        # Press near the top of the track, drag down to a quarter of its height.
        h = track.size["height"]
        ActionChains(driver).move_to_element_with_offset(track, 0, -h // 2 + 4).click_and_hold() \
            .move_by_offset(0, h // 4).move_by_offset(0, h // 2 - 8).release().perform()
        after = float(wait(lambda: (v := float(probe.ask("value strip.1.gain"))) != before and str(v), "the hub's value"))
        assert -60 <= after < before, f"strip.1.gain {before} -> {after}"
        shown = wait(lambda: widget(driver, "Fader 1"), "the widget")
        assert abs(shown["value"] - after) < 1e-3, (shown, after)
    finally:
        probe.close()


def test_cc_to_host_moves_the_widget_on_two_pages(driver):
    probe = Probe(NANO)
    second = browser(390, 844, mobile=True)
    try:
        open_page(driver, probe.url)
        open_page(second, probe.url)
        assert widget(driver, "Knob 1")["position"] != 1
        sent = time.time()
        for v in range(0, 128, 8):   # sweep: soft takeover picks the knob up on the way
            probe.ask(f"cc 1 16 {v}")
        probe.ask("cc 1 16 127")
        for page in (driver, second):
            wait(lambda: widget(page, "Knob 1")["position"] == 1, "Knob 1 at the top", 2)
        elapsed = time.time() - sent
        print(f"  two pages showed the CC {elapsed * 1000:.0f} ms after the sweep began")
        probe.ask("cc 1 32 127")   # Solo 1: a toggle
        for page in (driver, second):
            wait(lambda: widget(page, "Solo 1")["display"] == "on", "Solo 1 on", 2)
            assert "on" in page.find_element(By.CSS_SELECTOR, '.w[data-control="Solo 1"] .press').get_attribute("class")
    finally:
        second.quit()
        probe.close()


def test_touch_toggle_on_phone(driver):
    probe = Probe(NANO)
    phone = browser(390, 844, mobile=True)
    try:
        open_page(phone, probe.url)
        # Portrait: each group a row (knob, the buttons stacked, the fader side by side), the groups one under another.
        rows = phone.execute_script(
            "return [...document.querySelectorAll('#controls .group')].map(g=>[g.getBoundingClientRect().top,"
            "[...g.querySelectorAll('.gbody>*')].map(w=>Math.round(w.getBoundingClientRect().left))])")
        assert [r[0] for r in rows] == sorted(r[0] for r in rows) and rows[0][0] < rows[1][0], rows[:2]
        for _, lefts in rows:
            assert len(lefts) == 3 and lefts == sorted(lefts) and len(set(lefts)) == 3, f"a group is not one row: {lefts}"
        button = phone.find_element(By.CSS_SELECTOR, '.w[data-control="Mute 1"] .press')
        button.click()   # a tap: pointer events from touch emulation
        wait(lambda: probe.ask("value strip.1.mute") == "1.0", "strip.1.mute on")
    finally:
        phone.quit()
        probe.close()


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_host(mapping, port=0, soundfont=None):
    """`carillon live --no-audio --web PORT --mapping MAPPING [--soundfont FONT]`, once it serves
    the page: the process and the page's address (the process is ended if it never serves)."""
    carillon = os.path.join(os.path.dirname(PROBE), "carillon")
    host = subprocess.Popen([carillon, "live", "--no-audio", "--web", str(port), "--mapping", mapping]
                            + (["--soundfont", soundfont] if soundfont else []),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        while True:
            line = host.stdout.readline()
            assert line, "carillon live ended before serving the page"
            if line.startswith("web: "):
                return host, line.split()[1]
    except BaseException:
        stop_host(host)
        raise


def stop_host(host):
    host.terminate()
    try:
        host.wait(timeout=5)
    except subprocess.TimeoutExpired:
        host.kill()


def test_reload_of_the_real_host_reaches_the_open_page(driver):
    """`carillon live --no-audio --web` itself: the mapping file is edited while a
    page is open; the page shows the new control, which moves, and no longer the old."""
    folder = tempfile.mkdtemp(prefix="carillon-reload-")
    mapping = os.path.join(folder, "nano.yaml")
    shutil.copy(NANO, mapping)
    host, url = start_host(mapping, 0)
    later = None
    try:
        open_page(driver, url)
        assert widget(driver, "Fader 1") is not None
        with open(mapping) as f:
            text = f.read()
        assert "name: Fader 1\n" in text
        edited = mapping + ".tmp"
        with open(edited, "w") as f:
            f.write(text.replace("name: Fader 1\n", "name: Volume 1\n"))
        os.rename(edited, mapping)   # as an editor saves
        wait(lambda: widget(driver, "Volume 1") is not None and widget(driver, "Fader 1") is None,
             "the page to show the reloaded mapping", 5)
        before = widget(driver, "Volume 1")["value"]
        track = driver.find_element(By.CSS_SELECTOR, '.w[data-control="Volume 1"] .track')
        h = track.size["height"]
        ActionChains(driver).move_to_element_with_offset(track, 0, -h // 2 + 4).click_and_hold() \
            .move_by_offset(0, h // 2).release().perform()
        wait(lambda: widget(driver, "Volume 1")["value"] != before, "the host to take the new control's move", 3)
        later = browser()
        open_page(later, url)
        assert widget(later, "Volume 1") is not None and widget(later, "Fader 1") is None
    finally:
        if later:
            later.quit()
        stop_host(host)
        shutil.rmtree(folder, ignore_errors=True)


def test_page_reconnects_when_the_host_restarts(driver):
    """The host goes away: the page says it retries (backing off); the host comes
    back on the same port: the page reconnects by itself and shows the controls."""
    port = free_port()
    host, url = start_host(NANO, port)
    try:
        open_page(driver, url)
        hellos = driver.execute_script("return window.carillon.hellos")
        stop_host(host)
        wait(lambda: "retrying in" in driver.find_element(By.ID, "conn-text").text, "the page to say it retries", 5)
        wait(lambda: driver.execute_script("return window.carillon.attempts") >= 2, "a second attempt", 5)
        host, _ = start_host(NANO, port)
        wait(lambda: driver.execute_script("return window.carillon.connected && window.carillon.hellos > arguments[0]", hellos),
             "the page to reconnect and get a new hello", 15)
        assert driver.find_element(By.ID, "conn-text").text == ""
        assert widget(driver, "Fader 1") is not None
    finally:
        stop_host(host)


def test_keyboard_moves_a_fader_and_presses_a_toggle(driver):
    """Every widget reachable and movable without a pointer: sliders with ARIA
    roles, labels and values; buttons pressed with Space."""
    probe = Probe(NANO)
    try:
        open_page(driver, probe.url)
        fader = driver.find_element(By.CSS_SELECTOR, '.w[data-control="Fader 1"] .track')
        assert fader.get_attribute("role") == "slider" and fader.get_attribute("aria-label") == "Fader 1"
        assert fader.get_attribute("tabindex") == "0"
        # Tab order reaches it from the page.
        driver.find_element(By.TAG_NAME, "body").click()
        for _ in range(60):
            ActionChains(driver).send_keys(Keys.TAB).perform()
            if driver.switch_to.active_element == fader:
                break
        assert driver.switch_to.active_element == fader, "Tab never reached Fader 1"
        fader.send_keys(Keys.END)
        wait(lambda: probe.ask("value strip.1.gain") == "6.0", "End to put strip.1.gain at its top (6 dB)")
        fader.send_keys(Keys.PAGE_DOWN, Keys.ARROW_DOWN)
        wait(lambda: float(probe.ask("value strip.1.gain")) < 6, "PageDown and ArrowDown to lower it")
        wait(lambda: fader.get_attribute("aria-valuenow") == str(round((0.9 - 1 / 127) * 100)), "aria-valuenow to follow")
        assert fader.get_attribute("aria-valuetext").endswith("dB"), fader.get_attribute("aria-valuetext")
        knob = driver.find_element(By.CSS_SELECTOR, '.w[data-control="Knob 1"] .dial')
        assert knob.get_attribute("role") == "slider" and knob.get_attribute("aria-label") == "Knob 1"
        mute = driver.find_element(By.CSS_SELECTOR, '.w[data-control="Mute 1"] .press')
        assert mute.get_attribute("aria-label") == "Mute 1" and mute.get_attribute("aria-pressed") == "false"
        mute.send_keys(Keys.SPACE)
        wait(lambda: probe.ask("value strip.1.mute") == "1.0", "Space to turn Mute 1 on")
        wait(lambda: mute.get_attribute("aria-pressed") == "true", "aria-pressed to follow")
    finally:
        probe.close()


def test_keyboard_holds_a_pad_and_picks_a_selector_step(driver):
    """The Akai page by keyboard: Enter on a selector's step picks it; Space on
    a velocity pad holds it (its target at the top) until released."""
    probe = Probe(AKAI)
    try:
        open_page(driver, probe.url)
        step = driver.find_element(By.CSS_SELECTOR, '.w[data-control="K3 Waveform"] button[aria-label="K3 Waveform 3"]')
        step.send_keys(Keys.ENTER)
        wait(lambda: probe.ask("value tone.waveform") == "2.0", "Enter on step 3 to pick waveform 2")
        pad = driver.find_element(By.CSS_SELECTOR, '.w[data-control="Pad A7 Accent"] .press')
        assert pad.get_attribute("aria-label") == "Pad A7 Accent"
        driver.execute_script("arguments[0].focus()", pad)   # as Tab leaves it (a click would press it too)
        ActionChains(driver).key_down(Keys.SPACE).perform()
        wait(lambda: probe.ask("value tone.level") == "0.0", "Space to hold the pad (tone.level at its top, 0 dB)")
        time.sleep(0.2)
        assert probe.ask("value tone.level") == "0.0", "held while the key is down"
        ActionChains(driver).key_up(Keys.SPACE).perform()
        wait(lambda: probe.ask("value tone.level") == "-60.0", "the release to let go (-60 dB)")
    finally:
        probe.close()


ZONES_JS = """
const kb=document.getElementById('keyboard').getBoundingClientRect();
return {keyboard:{left:kb.left,right:kb.right,width:kb.width,top:kb.top},
  scene:document.getElementById('scene-name').textContent,
  list:document.getElementById('zones').getAttribute('aria-label'),
  buttons:[...document.querySelectorAll('#scene-buttons button')].map(b=>[b.textContent,b.getAttribute('aria-pressed')]),
  octaves:[...document.querySelectorAll('#keyboard .oct')].map(o=>[o.textContent,o.getBoundingClientRect().left]),
  zones:[...document.querySelectorAll('#zones .zone')].map(z=>{const r=z.getBoundingClientRect();
    return {name:z.dataset.zone,text:z.textContent,label:z.getAttribute('aria-label'),row:Number(z.dataset.row),
      left:r.left,right:r.right,top:r.top,bottom:r.bottom}})}
"""


def zone_strip(driver):
    return driver.execute_script(ZONES_JS)


def zone_names(driver):
    return [z["name"] for z in zone_strip(driver)["zones"]]


def test_zone_strip_shows_the_scenes_zones_and_follows_switches(driver):
    """The stage piano's rig over a 128-key keyboard: each zone a bar over its
    keys with its name, keys and destinations, the layers stacked, the scene
    named; switching scenes by the page's scene buttons, by a program change
    (the mapping's selector on channel 16) and by the page's Scene control
    redraws the strip."""
    probe = Probe(STAGE)
    try:
        driver.set_window_size(1280, 800)
        open_page(driver, probe.url)
        assert driver.find_element(By.ID, "rig").is_displayed()
        strip = zone_strip(driver)
        assert strip["scene"] == "Scene: Split", strip["scene"]
        assert strip["list"] == "4 zones in scene Split", strip["list"]
        assert strip["buttons"] == [["Split", "true"], ["Piano only", "false"]], strip["buttons"]
        shown = {z["name"]: z for z in strip["zones"]}
        assert list(shown) == ["Bass", "Piano", "Strings", "Synth"], list(shown)
        assert shown["Bass"]["text"] == "Bass C-1..B2 → ch 2 +12", shown["Bass"]["text"]
        assert shown["Piano"]["text"] == "Piano C3..G9 → ch 1"
        assert shown["Strings"]["text"] == "Strings C3..G9 → ch 3 vel ×0.6+10"
        assert shown["Synth"]["text"] == "Synth C5..G9 → Hardware Synth ch 1"
        assert shown["Bass"]["label"] == "Bass: keys C-1 to B2, to channel 2, transposed +12 semitones"
        assert shown["Synth"]["label"] == "Synth: keys C5 to G9, to port Hardware Synth channel 1"
        # Over the keyboard: 75 white keys from C-1 to G9; C3 is the 29th, C4 (60) the 36th, C5 the 43rd.
        kb = strip["keyboard"]
        x = lambda whites: kb["left"] + kb["width"] * whites / 75   # noqa: E731
        near = lambda a, b: abs(a - b) <= 3   # noqa: E731
        assert near(shown["Bass"]["left"], kb["left"]) and near(shown["Bass"]["right"], x(28)), (shown["Bass"], kb)
        assert near(shown["Piano"]["left"], x(28)) and near(shown["Piano"]["right"], kb["right"]), shown["Piano"]
        assert near(shown["Synth"]["left"], x(42)), shown["Synth"]
        assert abs(dict(strip["octaves"])["C4"] - x(35)) <= 2, strip["octaves"]
        # The split on one row, the strings stacked under the piano, the synth under both; all above the keys.
        assert shown["Bass"]["top"] == shown["Piano"]["top"]
        assert shown["Strings"]["top"] >= shown["Piano"]["bottom"] and shown["Synth"]["top"] >= shown["Strings"]["bottom"]
        assert shown["Synth"]["bottom"] <= kb["top"]
        # 1. The page's own scene buttons.
        driver.find_element(By.CSS_SELECTOR, '#scene-buttons button[aria-label="Scene Piano only"]').click()
        wait(lambda: probe.ask("scene") == "Piano only", "the hub to switch to Piano only")
        wait(lambda: zone_names(driver) == ["Piano"], "the strip to show Piano only's zone", 2)
        strip = zone_strip(driver)
        piano = strip["zones"][0]
        assert piano["text"] == "Piano C-1..G9 → ch 1 vel s-curve 2", piano["text"]
        assert near(piano["left"], kb["left"]) and near(piano["right"], kb["right"]), piano
        assert strip["scene"] == "Scene: Piano only" and strip["list"] == "1 zone in scene Piano only", strip
        assert strip["buttons"] == [["Split", "false"], ["Piano only", "true"]], strip["buttons"]
        # 2. A program change on channel 16, as the keyboard's scene buttons send.
        assert probe.ask("pc 16 0") == "ok"
        wait(lambda: zone_names(driver) == ["Bass", "Piano", "Strings", "Synth"], "program change 0 to bring Split back", 2)
        assert probe.ask("scene") == "Split" and zone_strip(driver)["scene"] == "Scene: Split"
        # 3. The page's Scene control: the mapping's selector, by keyboard.
        driver.find_element(By.CSS_SELECTOR, '.w[data-control="Scene"] button[aria-label="Scene 2"]').send_keys(Keys.ENTER)
        wait(lambda: zone_names(driver) == ["Piano"], "the Scene control's step 2 to switch to Piano only", 2)
        assert probe.ask("scene") == "Piano only"
    finally:
        probe.close()


def test_zone_strip_follows_a_reload_of_the_real_host(driver):
    """`carillon live --no-audio --web` with the stage piano: the page shows the
    first scene's zones; the file edited (the bass two octaves up) reaches the
    open page in the reload's hello."""
    folder = tempfile.mkdtemp(prefix="carillon-zones-")
    mapping = os.path.join(folder, "stage.yaml")
    shutil.copy(STAGE, mapping)
    host, url = start_host(mapping, 0)
    try:
        open_page(driver, url)
        wait(lambda: zone_names(driver) == ["Bass", "Piano", "Strings", "Synth"], "the stage piano's zones")
        assert zone_strip(driver)["scene"] == "Scene: Split"
        with open(mapping) as f:
            text = f.read()
        line = "{ name: Bass,    keys: C-1..B2, to: 2, transpose: 12 }"
        assert line in text
        with open(mapping + ".tmp", "w") as f:
            f.write(text.replace(line, "{ name: Low bass, keys: C-1..B2, to: 2, transpose: 24 }"))
        os.rename(mapping + ".tmp", mapping)
        wait(lambda: zone_names(driver)[:1] == ["Low bass"], "the reloaded zones on the page", 5)
        strip = zone_strip(driver)
        assert strip["zones"][0]["text"] == "Low bass C-1..B2 → ch 2 +24", strip["zones"][0]
        # A reload leaves no scene current: the file's top-level zones are in force.
        assert strip["scene"] == "Scene: none (the mapping's own zones)", strip["scene"]
    finally:
        stop_host(host)
        shutil.rmtree(folder, ignore_errors=True)


def test_zone_strip_on_a_phone(driver):
    """Portrait phone: the strip fits the width (no sideways scroll), the bars
    keep their order, the scene buttons are touch-sized and a tap switches."""
    probe = Probe(STAGE)
    phone = browser(390, 844, mobile=True)
    try:
        open_page(phone, probe.url)
        strip = zone_strip(phone)
        assert [z["name"] for z in strip["zones"]] == ["Bass", "Piano", "Strings", "Synth"]
        assert strip["keyboard"]["right"] <= 390 and phone.execute_script(
            "return document.documentElement.scrollWidth") <= 390
        lefts = [z["left"] for z in strip["zones"]]
        assert lefts[0] < lefts[1] == lefts[2] < lefts[3], lefts
        phone.find_element(By.CSS_SELECTOR, '#scene-buttons button[aria-label="Scene Piano only"]').click()
        wait(lambda: zone_names(phone) == ["Piano"], "a tap to switch the scene", 2)
    finally:
        phone.quit()
        probe.close()


def strip_sound(page, channel):
    """What a page's channel strip shows: name and bank:program, as drawn."""
    return page.execute_script(
        "const b=document.querySelector('#sound-list .sound[data-channel=\\''+arguments[0]+'\\']');"
        "return b?b.querySelector('.name').textContent+' '+b.querySelector('.bp').textContent:null", channel)


def queue(probe):
    """The messages the probe's render queue got since the last look (hex), taken."""
    probe.proc.stdin.write("queue\n")
    probe.proc.stdin.flush()
    out = []
    while (line := probe.proc.stdout.readline().strip()) != "end":
        out.append(line)
    return out


def test_preset_picked_by_name_reaches_the_engine_and_a_second_page(driver):
    """The stage piano with FluidR3: each channel strip shows its preset; on one
    page the picker (grouped by GM class; drum kits only on channel 10) is searched for "warm
    pad" and the match picked on channel 3; the render queue gets bank select
    then program change on channel 3, and both pages show Warm Pad 0:89."""
    probe = Probe(STAGE, FLUID)
    second = browser(390, 844, mobile=True)
    try:
        open_page(driver, probe.url)
        open_page(second, probe.url)
        for page in (driver, second):
            assert [strip_sound(page, c) for c in (1, 2, 3)] == \
                ["Yamaha Grand Piano 0:0", "Fingered Bass 0:33", "Strings 0:48"], [strip_sound(page, c) for c in (1, 2, 3)]
        queue(probe)   # what the start sent (the first scene)
        driver.find_element(By.CSS_SELECTOR, '#sound-list .sound[data-channel="3"]').click()
        wait(lambda: driver.find_element(By.ID, "picker").is_displayed(), "the picker to open")
        classes = driver.execute_script(
            "return [...document.querySelectorAll('#preset-list section')].map(s=>[s.dataset.class,"
            "[...s.querySelectorAll('button')].map(b=>[Number(b.dataset.bank),Number(b.dataset.program)])])")
        names = [c for c, _ in classes]
        assert names == ["Piano", "Chromatic Percussion", "Organ", "Guitar", "Bass", "Strings", "Ensemble", "Brass",
                         "Reed", "Pipe", "Synth Lead", "Synth Pad", "Synth Effects", "Ethnic", "Percussive",
                         "Sound Effects"], names   # channel 3: no drum kits (bank select cannot reach 128)
        for i, (name, presets) in enumerate(classes):
            assert all(b <= 127 and p // 8 == i for b, p in presets), (name, presets)
            assert sorted(p for b, p in presets if b == 0) == list(range(8 * i, 8 * i + 8)), (name, presets)
        search = driver.find_element(By.ID, "preset-search")
        search.send_keys("warm pad")
        shown = driver.execute_script(
            "return [...document.querySelectorAll('#preset-list button')].map(b=>b.dataset.name+' '+b.dataset.bank+':'+b.dataset.program)")
        assert shown == ["Warm Pad 0:89"], shown
        search.send_keys(Keys.ENTER)   # the first match
        wait(lambda: not driver.find_element(By.ID, "picker").is_displayed(), "the picker to close")
        got = wait(lambda: queue(probe) or None, "the render queue to get the preset")
        assert got == ["B2 00 00", "C2 59 00"], got   # channel 3: bank select 0, then program change 89
        for page in (driver, second):
            wait(lambda: strip_sound(page, 3) == "Warm Pad 0:89", "the strip to show Warm Pad", 2)
        # The group of channel 3's fader names it too.
        assert second.execute_script(
            "return document.querySelector('.gpreset[data-channel=\\'3\\']').textContent") == "Warm Pad"
        # A preset changed elsewhere (a scene, OSC) reaches the pages as well.
        probe.ask("pc 16 1")   # the scene selector: "Piano only" (no presets of its own: nothing moves)
        probe.ask("pc 16 0")
        assert strip_sound(second, 3) == "Warm Pad 0:89"
    finally:
        second.quit()
        probe.close()


def test_a_program_change_from_the_keyboard_shows_on_the_strips(driver):
    """The keyboard sends bank select and program change on channel 1 straight to the
    sampler (no control takes them; the stage piano's zones take them to channels 1, 2
    and 3): once the instrument got them, both pages' strips show Warm Pad; a bank
    select alone moves nothing (FluidSynth selects at the program change)."""
    probe = Probe(STAGE, FLUID)
    second = browser(390, 844, mobile=True)
    try:
        open_page(driver, probe.url)
        open_page(second, probe.url)
        wait(lambda: strip_sound(driver, 1) == "Yamaha Grand Piano 0:0", "channel 1's preset")
        queue(probe)   # what the start sent (the first scene)
        assert probe.ask("key B0 00 00") == "ok"
        assert probe.ask("key C0 59") == "ok"
        for page in (driver, second):
            for c in (1, 2, 3):
                wait(lambda: strip_sound(page, c) == "Warm Pad 0:89", f"strip {c} to show Warm Pad", 3)
        got = queue(probe)
        assert sorted(got) == ["B0 00 00", "B1 00 00", "B2 00 00", "C0 59 00", "C1 59 00", "C2 59 00"], got
        assert probe.ask("value channel.2.program") == "89.0"   # the hub's value too (OSC's feedback)
        # A bank select alone: the strips wait for the program change, as the sampler does.
        assert probe.ask("key B0 00 08") == "ok"
        wait(lambda: len(queue(probe)) == 3, "the bank select to reach the instrument")
        time.sleep(0.2)
        assert strip_sound(driver, 3) == "Warm Pad 0:89", strip_sound(driver, 3)
        assert probe.ask("key C0 04") == "ok"
        wait(lambda: strip_sound(second, 3) == "Detuned EP 1 8:4", "channel 3's strip", 3)
    finally:
        second.quit()
        probe.close()


def test_presets_picked_on_the_real_host(driver):
    """`carillon live --no-audio --web` with FluidR3: a page picks Slow Strings on
    channel 2 by a click in the list; a second page opened later shows it."""
    host, url = start_host(STAGE, soundfont=FLUID)
    later = None
    try:
        open_page(driver, url)
        wait(lambda: strip_sound(driver, 2) == "Fingered Bass 0:33", "channel 2's preset")
        driver.find_element(By.CSS_SELECTOR, '#sound-list .sound[data-channel="2"]').click()
        driver.find_element(By.ID, "preset-search").send_keys("slow")
        driver.find_element(By.CSS_SELECTOR, '#preset-list button[data-name="Slow Strings"]').click()
        wait(lambda: strip_sound(driver, 2) == "Slow Strings 0:49", "the page to show Slow Strings", 2)
        later = browser()
        open_page(later, url)
        assert strip_sound(later, 2) == "Slow Strings 0:49", strip_sound(later, 2)
    finally:
        if later:
            later.quit()
        stop_host(host)


def clicked(page, css):
    """Clicks what `css` finds; False when the page redrew it meanwhile (a reload's hello), to try again."""
    from selenium.common.exceptions import StaleElementReferenceException, NoSuchElementException
    try:
        page.find_element(By.CSS_SELECTOR, css).click()
        return True
    except (StaleElementReferenceException, NoSuchElementException):
        return False


def test_save_as_scene_from_the_page_then_the_reload_plays_it(driver):
    """`carillon live --no-audio --web` on a copy of the stage piano: Warm Pad
    picked on channel 3, "Save as scene" as Gig; the file keeps its comments,
    the old one is FILE.bak, and the watcher's reload brings the scene to both
    pages; Slow Strings picked, then the Gig scene button: Warm Pad again."""
    folder = tempfile.mkdtemp(prefix="carillon-save-page-")
    mapping = os.path.join(folder, "stage.yaml")
    shutil.copy(STAGE, mapping)
    with open(mapping) as f:
        original = f.read()
    host, url = start_host(mapping, soundfont=FLUID)
    second = None
    try:
        open_page(driver, url)
        second = browser(390, 844, mobile=True)
        open_page(second, url)

        def pick(page, channel, search, name):
            # The reload's hello (the watcher's, after a save) redraws the strips: press what is there then.
            wait(lambda: clicked(page, f'#sound-list .sound[data-channel="{channel}"]'), f"channel {channel}'s strip", 3)
            page.find_element(By.ID, "preset-search").send_keys(search)
            wait(lambda: clicked(page, f'#preset-list button[data-name="{name}"]'), f"{name} in the list", 3)

        pick(driver, 3, "warm", "Warm Pad")
        wait(lambda: strip_sound(driver, 3) == "Warm Pad 0:89", "Warm Pad on channel 3", 2)
        driver.find_element(By.ID, "save-name").send_keys("Gig")
        driver.find_element(By.ID, "save-button").click()
        wait(lambda: driver.execute_script("return window.carillon.saved") == "Gig", "the host to say it saved", 5)
        for page in (driver, second):
            wait(lambda: "Gig" in page.execute_script("return window.carillon.rig.scenes"), "the reload's scene list", 5)
        with open(mapping) as f:
            text = f.read()
        kept = [l for l in original.split("\n") if l.lstrip().startswith("#")]
        assert all(l in text.split("\n") for l in kept), "a comment was lost"
        assert "  - name: Gig\n" in text and "3: { bank: 0, program: 89 }" in text, text[-400:]
        with open(mapping + ".bak") as f:
            assert f.read() == original
        pick(second, 3, "slow", "Slow Strings")
        wait(lambda: strip_sound(driver, 3) == "Slow Strings 0:49", "Slow Strings on the first page", 2)
        wait(lambda: clicked(second, '#scene-buttons button[aria-label="Scene Gig"]'), "the Gig scene button", 3)
        for page in (driver, second):
            wait(lambda: strip_sound(page, 3) == "Warm Pad 0:89", "the saved scene to bring Warm Pad back", 3)
    finally:
        if second:
            second.quit()
        stop_host(host)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_kill_during_save_as_scene_leaves_the_old_file_or_the_new(driver):
    """The probe saves scene Live over and over (channel 1's program 10, then 20)
    and is killed (SIGKILL) at a random moment, 40 times: the mapping file is
    always the file before, or one of the two the saves write, whole; so is its
    backup. Counts the kills that landed between a write and its rename."""
    import random
    folder = tempfile.mkdtemp(prefix="carillon-save-kill-")
    path = os.path.join(folder, "stage.yaml")
    try:
        with open(STAGE) as f:
            before = f.read()

        def fresh():
            for name in os.listdir(folder):
                os.unlink(os.path.join(folder, name))
            with open(path, "w") as f:
                f.write(before)

        texts = {before}
        fresh()
        for program in (10, 20):
            probe = Probe(path)
            assert probe.ask(f"preset 1 0 {program}") == "ok"
            assert probe.ask("save Live") == "ok"
            probe.close()
            with open(path) as f:
                texts.add(f.read())
        assert len(texts) == 3, "saving over the scene did not give one text per program"
        rng = random.Random(41)
        midway = 0
        saves = 0
        for _ in range(40):
            fresh()
            proc = subprocess.Popen([PROBE, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert proc.stdout.readline().startswith("listening")
            proc.stdin.write("save-loop Live\n")
            proc.stdin.flush()
            assert proc.stdout.readline().startswith("saved"), "the probe did not save"
            time.sleep(rng.uniform(0, 0.03))
            proc.kill()
            proc.wait()
            saves += 1 + sum(1 for line in proc.stdout if line.startswith("saved"))
            with open(path) as f:
                assert f.read() in texts, "the mapping file is neither the old one nor a saved one"
            if os.path.exists(path + ".bak"):
                with open(path + ".bak") as f:
                    assert f.read() in texts, "the backup is broken"
            midway += any(name.endswith(".tmp") for name in os.listdir(folder))
        print(f"  40 kills during {saves} saves: every file whole; {midway} kills left a temporary file (between write and rename)")
        # The next save sweeps what a killed one left.
        with open(os.path.join(folder, ".stage.yaml.save-999999.tmp"), "w") as f:
            f.write("half")
        probe = Probe(path)
        assert probe.ask("save Live") == "ok"
        probe.close()
        left = [n for n in os.listdir(folder) if n.endswith(".tmp")]
        assert not left, left
    finally:
        shutil.rmtree(folder, ignore_errors=True)


LAYOUT_JS = """
return [...document.querySelectorAll(arguments[0])].map(g=>{const r=g.getBoundingClientRect();
  const m=g.querySelector('.gmeter'),mr=m&&m.getBoundingClientRect();
  return {name:g.dataset.group,left:r.left,top:r.top,
    widgets:[...g.querySelectorAll('.w')].map(w=>{const b=w.getBoundingClientRect();
      return {name:w.dataset.control,kind:w.dataset.kind,top:b.top,bottom:b.bottom,left:b.left,right:b.right}}),
    meter:m?{strip:m.dataset.strip,left:mr.left,top:mr.top,bottom:mr.bottom,height:mr.height}:null}})
"""


def test_nanokontrol2_page_is_laid_out_like_the_hardware(driver):
    """Eight strips left to right, each its knob over its S/M(/R) buttons over its
    fader with the strip's meter beside it; the transport in the bar above."""
    probe = Probe(NANO)
    try:
        driver.set_window_size(1280, 800)
        open_page(driver, probe.url)
        groups = driver.execute_script(LAYOUT_JS, "#controls .group")
        assert [g["name"] for g in groups] == [f"Strip {n}" for n in range(1, 9)], [g["name"] for g in groups]
        lefts = [g["left"] for g in groups]
        assert lefts == sorted(lefts) and len({round(g["top"]) for g in groups}) == 1, "not one row of columns"
        for n, g in enumerate(groups, 1):
            names = [w["name"] for w in g["widgets"]]
            assert names == [f"Knob {n}", f"Solo {n}", f"Mute {n}"] + ([f"Record {n}"] if n <= 3 else []) + [f"Fader {n}"], names
            tops = [w["top"] for w in g["widgets"]]
            assert tops == sorted(tops) and len(set(tops)) == len(tops), f"Strip {n} is not top to bottom: {tops}"
            fader, meter = g["widgets"][-1], g["meter"]
            assert meter and meter["strip"] == str(n), meter
            assert meter["left"] >= fader["right"] - 1 and meter["top"] < fader["bottom"] and meter["bottom"] > fader["top"], \
                f"Strip {n}'s meter is not beside its fader: {meter} {fader}"
            assert meter["height"] > 100, meter
        bar = driver.execute_script(LAYOUT_JS, "#bar .group")
        assert [(g["name"], [w["name"] for w in g["widgets"]]) for g in bar] == [("Transport", ["Play", "Stop", "Cycle"])], bar
        assert bar[0]["top"] < groups[0]["top"], "the transport bar is not above the strips"
    finally:
        probe.close()


CONTRAST_AND_SIZES_JS = """
function lum(c){const v=c.match(/[\\d.]+/g).map(Number).slice(0,3).map(x=>{x/=255;return x<=0.03928?x/12.92:Math.pow((x+0.055)/1.055,2.4)});
  return 0.2126*v[0]+0.7152*v[1]+0.0722*v[2]}
function behind(e){for(;e;e=e.parentElement){const c=getComputedStyle(e).backgroundColor,a=c.match(/[\\d.]+/g).map(Number);
  if(a.length<4||a[3]>0)return c}return "rgb(0,0,0)"}
const low=[],small=[];
for(const e of document.querySelectorAll('.label,.value,.group h2,.stat,h1,.press,.sel button,#rig h2,#zones li,#scene-buttons button')){
  if(!e.textContent.trim()||!e.offsetWidth)continue;
  const a=lum(getComputedStyle(e).color),b=lum(behind(e)),ratio=(Math.max(a,b)+0.05)/(Math.min(a,b)+0.05);
  if(ratio<4.5)low.push([e.className||e.tagName,e.textContent.slice(0,20),ratio.toFixed(2)])}
for(const e of document.querySelectorAll('button,[role=slider]')){const r=e.getBoundingClientRect();
  if(!r.width)continue;if(r.width<44||r.height<44)small.push([e.getAttribute('aria-label')||e.title,Math.round(r.width),Math.round(r.height)])}
return {low,small}
"""


def test_touch_pad_plays_a_note_while_touched(driver):
    """The Akai mapping's page-only xy pad, by a finger (touch events, as a
    phone sends them): a square; touching plays channel 1's note under the
    finger (x: C3...C6) with y as expression, a slide changes both, lifting
    the finger ends the note. Then by keyboard: arrows move, Space touches."""
    probe = Probe(AKAI)
    phone = browser(390, 844, mobile=True)
    try:
        open_page(phone, probe.url)
        area = phone.find_element(By.CSS_SELECTOR, '.w[data-control="Touch pad"] .xy-area')
        phone.execute_script("arguments[0].scrollIntoView({block:'center'})", area)
        left, top, w, h = phone.execute_script(
            "const r=arguments[0].getBoundingClientRect();return [r.left,r.top,r.width,r.height]", area)
        assert abs(w - h) <= 1 and w >= 160, (w, h)

        def finger(kind, fx=None, fy=None):   # fx, fy: 0...1 across and down the pad
            points = [] if fx is None else [{"x": left + w * fx, "y": top + h * fy}]
            phone.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

        assert probe.ask("value channel.1.gate") == "0.0"
        finger("touchStart", 0.25, 0.25)   # a quarter across, three quarters up
        wait(lambda: probe.ask("value channel.1.gate") == "1.0", "the touch to open the gate")
        note = float(probe.ask("value channel.1.note"))
        assert abs(note - (48 + 0.25 * 36)) <= 1.5, note
        expression = float(probe.ask("value channel.1.cc.11"))
        assert abs(expression - (40 + 0.75 * 87)) <= 3, expression
        for i in range(1, 11):   # slide right and down
            finger("touchMove", 0.25 + 0.05 * i, 0.25 + 0.05 * i)
            time.sleep(0.02)
        wait(lambda: abs(float(probe.ask("value channel.1.note")) - (48 + 0.75 * 36)) <= 1.5, "the slide to raise the note")
        assert float(probe.ask("value channel.1.cc.11")) < expression - 30, "sliding down lowers the expression"
        assert probe.ask("value channel.1.gate") == "1.0"
        finger("touchEnd")
        wait(lambda: probe.ask("value channel.1.gate") == "0.0", "lifting the finger to close the gate")
        before = float(probe.ask("value channel.1.note"))
        area.send_keys(*[Keys.ARROW_RIGHT] * 8)   # 8/127 of the way: more than a semitone
        wait(lambda: float(probe.ask("value channel.1.note")) > before, "ArrowRight to raise the note")
        ActionChains(phone).key_down(Keys.SPACE).perform()   # the pad has the focus from the arrows
        wait(lambda: probe.ask("value channel.1.gate") == "1.0", "Space to touch")
        ActionChains(phone).key_up(Keys.SPACE).perform()
        wait(lambda: probe.ask("value channel.1.gate") == "0.0", "Space's release to lift")
    finally:
        phone.quit()
        probe.close()


def test_contrast_and_touch_sizes_on_a_phone(driver):
    """Daylight on a phone: every text at least 4.5:1 against what is behind it
    (WCAG AA), every button and slider at least 44 x 44 CSS pixels."""
    phone = browser(390, 844, mobile=True)
    try:
        for mapping in (NANO, AKAI, STAGE):
            probe = Probe(mapping, FLUID if mapping == STAGE else None)   # the stage piano with its channel strips
            try:
                open_page(phone, probe.url)
                found = phone.execute_script(CONTRAST_AND_SIZES_JS)
                assert not found["low"], f"{os.path.basename(mapping)}: text below 4.5:1: {found['low'][:5]}"
                assert not found["small"], f"{os.path.basename(mapping)}: targets under 44 px: {found['small'][:5]}"
            finally:
                probe.close()
    finally:
        phone.quit()


def test_an_afternoon_with_the_page_open_grows_no_memory(driver):
    """The real host and a page under steady use: controls moved from the page 50
    times a second and the mapping reloaded (every page rebuilt) every few seconds,
    in rounds. After a warm-up round, neither the page's heap (after a garbage
    collection), its element count nor the host's resident memory grows."""
    folder = tempfile.mkdtemp(prefix="carillon-memory-")
    mapping = os.path.join(folder, "nano.yaml")
    shutil.copy(NANO, mapping)
    with open(mapping) as f:
        original = f.read()
    host, url = start_host(mapping, 0)
    page = browser(extra=("--js-flags=--expose-gc", "--enable-precise-memory-info"))
    try:
        open_page(page, url)
        page.execute_script("""
            window.moves=0;const sliders=()=>[...document.querySelectorAll('[role=slider]')];
            setInterval(()=>{const s=sliders();if(!s.length)return;const e=s[window.moves%s.length];
              e.dispatchEvent(new KeyboardEvent('keydown',{key:window.moves%2?'ArrowUp':'PageDown',bubbles:true}));window.moves++},20)""")

        def one_round(seconds=12, reloads=4):
            for i in range(reloads):
                hellos = page.execute_script("return window.carillon.hellos")
                text = original.replace("name: Fader 1\n", f"name: Fader 1 v{i}\n") if i % 2 == 0 else original
                with open(mapping + ".tmp", "w") as f:
                    f.write(text)
                os.rename(mapping + ".tmp", mapping)
                wait(lambda: page.execute_script("return window.carillon.hellos") > hellos, "the reload's hello", 5)
                time.sleep(seconds / reloads)

        def measure():
            page.execute_script("window.gc()")
            heap = page.execute_script("return performance.memory.usedJSHeapSize")
            nodes = page.execute_script("return document.getElementsByTagName('*').length")
            with open(f"/proc/{host.pid}/status") as f:
                rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
            return heap, nodes, rss

        one_round()
        heap0, nodes0, rss0 = measure()
        for _ in range(3):
            one_round()
        heap1, nodes1, rss1 = measure()
        moves = page.execute_script("return window.moves")
        received = page.execute_script("return window.carillon.received")
        print(f"  {moves} moves, {received} messages, 12 reloads: page heap {heap0 / 1e6:.2f} -> {heap1 / 1e6:.2f} MB, "
              f"elements {nodes0} -> {nodes1}, host RSS {rss0 / 1024:.1f} -> {rss1 / 1024:.1f} MiB")
        assert moves > 1500 and host.poll() is None
        assert nodes1 == nodes0, (nodes0, nodes1)
        assert heap1 - heap0 < 512 * 1024, f"page heap grew {heap0} -> {heap1}"
        assert rss1 - rss0 < 4 * 1024, f"host RSS grew {rss0} -> {rss1} KiB"
    finally:
        page.quit()
        stop_host(host)
        shutil.rmtree(folder, ignore_errors=True)


SIZES = {"phone": (390, 844, True), "tablet": (820, 1180, True), "desktop": (1280, 800, False)}


def test_screenshots_of_the_shipped_mappings(driver):
    """docs/screenshots/MAPPING-SIZE.png at phone, tablet and desktop sizes, and
    docs/web-surface.png (the README's): written to docs/ only when asked
    (CARILLON_UPDATE_SCREENSHOT=1), so a test run leaves the tree clean."""
    docs = os.environ.get("CARILLON_UPDATE_SCREENSHOT") == "1"
    folder = os.path.join(ROOT, "docs" if docs else ".build", "screenshots")
    os.makedirs(folder, exist_ok=True)
    for mapping in sorted(glob.glob(os.path.join(ROOT, "mappings", "*.yaml"))):
        stem = os.path.splitext(os.path.basename(mapping))[0]
        probe = Probe(mapping)
        try:
            for size, (w, h, mobile) in SIZES.items():
                page = browser(w, h, mobile=mobile) if mobile else driver
                try:
                    page.set_window_size(w, h) if not mobile else None
                    open_page(page, probe.url)
                    if mapping == NANO:
                        for cc, v in ((0, 127), (0, 100), (1, 90), (2, 70), (16, 64), (17, 100), (33, 127), (49, 127)):
                            probe.ask(f"cc 1 {cc} {v}")
                        time.sleep(0.3)
                    path = os.path.join(folder, f"{stem}-{size}.png")
                    assert page.save_screenshot(path) and os.path.getsize(path) > 10_000, path
                    if mapping == NANO and size == "desktop":
                        shutil.copy(path, os.path.join(ROOT, "docs" if docs else ".build", "web-surface.png"))
                finally:
                    if mobile:
                        page.quit()
        finally:
            probe.close()


def main():
    only = sys.argv[2] if len(sys.argv) > 2 else ""   # a part of the test names to run
    tests = [v for k, v in globals().items() if k.startswith("test_") and only in k]
    driver = browser()
    passed = failed = 0
    try:
        for test in tests:
            try:
                test(driver)
                passed += 1
                print(f"ok   {test.__name__}")
            except Exception:
                failed += 1
                print(f"FAIL {test.__name__}")
                traceback.print_exc()
    finally:
        driver.quit()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
