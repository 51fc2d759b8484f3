#!/usr/bin/env bash
# Browser tests of the web surface: headless Chromium (Debian's chromium and
# chromium-driver, from scripts/setup) driven by Selenium (from PyPI, in a
# virtual environment made here) against carillon-web-probe.
#   Tests/Browser/run.sh [NAME-PART]   (after `swift build --build-tests`, which builds the probe;
#                                     NAME-PART: only the tests whose names hold it)
# Prints "N passed, N failed"; exits non-zero on a failure. Screenshot: .build/web-surface.png,
# or docs/web-surface.png (the README's) with CARILLON_UPDATE_SCREENSHOT=1.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.build/browser-venv
if [ ! -x "$venv/bin/python" ]; then
    echo "== creating $venv with selenium from PyPI" >&2
    python3 -m venv "$venv"
fi
"$venv/bin/python" -c "import selenium" 2>/dev/null || "$venv/bin/pip" install -q "selenium>=4.10" >&2
probe=.build/debug/carillon-web-probe
[ -x "$probe" ] || swift build --product carillon-web-probe >&2
# the reload test runs the host itself
[ -x .build/debug/carillon ] || swift build --product carillon >&2
exec "$venv/bin/python" Tests/Browser/web_surface_test.py "$probe" "$@"
