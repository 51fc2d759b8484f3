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


class Probe:
    def __init__(self, mapping):
        self.proc = subprocess.Popen([PROBE, mapping], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
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


def browser(width=1280, height=800, mobile=False):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--hide-scrollbars"):
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
                "return [...document.querySelectorAll('#controls .w')].map(e=>"
                "[e.dataset.control, e.querySelector('.value').textContent, e.offsetWidth>0&&e.offsetHeight>0])")
            assert [(n, d) for n, d, _ in shown] == expected, f"{os.path.basename(mapping)}: {shown[:3]} vs {expected[:3]}"
            assert all(visible for _, _, visible in shown), f"{os.path.basename(mapping)}: a widget has no size"
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
        columns = phone.execute_script(
            "return getComputedStyle(document.getElementById('controls')).gridTemplateColumns.split(' ').length")
        assert columns == 3, f"phone portrait shows {columns} columns"
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


def start_host(mapping, port):
    carillon = os.path.join(os.path.dirname(PROBE), "carillon")
    host = subprocess.Popen([carillon, "live", "--no-audio", "--web", str(port), "--mapping", mapping],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    while True:
        line = host.stdout.readline()
        assert line, "carillon live ended before serving the page"
        if line.startswith("web: "):
            return host, line.split()[1]


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


def test_screenshot_for_readme(driver):
    probe = Probe(NANO)
    try:
        driver.set_window_size(1280, 800)
        open_page(driver, probe.url)
        for cc, v in ((0, 127), (0, 100), (1, 90), (2, 70), (16, 64), (17, 100), (33, 127), (49, 127)):
            probe.ask(f"cc 1 {cc} {v}")
        time.sleep(0.3)
        # docs/web-surface.png (the README's) only when asked: a test run leaves the tree clean.
        folder = "docs" if os.environ.get("CARILLON_UPDATE_SCREENSHOT") == "1" else ".build"
        os.makedirs(os.path.join(ROOT, folder), exist_ok=True)
        path = os.path.join(ROOT, folder, "web-surface.png")
        assert driver.save_screenshot(path), "no screenshot"
        assert os.path.getsize(path) > 10_000
    finally:
        probe.close()


def main():
    tests = [v for k, v in globals().items() if k.startswith("test_")]
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
