#!/usr/bin/env bash
# Browser tests of the web surface: headless Chromium (Debian's chromium and
# chromium-driver, from scripts/setup) driven by Selenium (from PyPI, in a
# virtual environment made here) against carillon-web-probe.
#   Tests/Browser/run.sh [NAME-PART]   (after `swift build --build-tests`, which builds the probe;
#                                     NAME-PART: only the tests whose names hold it;
#                                     CARILLON_BUILD_FLAGS: the build to use, as scripts/test's)
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
# shellcheck disable=SC2086  # CARILLON_BUILD_FLAGS: words on purpose
bin=$(swift build ${CARILLON_BUILD_FLAGS:-} --show-bin-path)
probe=$bin/carillon-web-probe
[ -x "$probe" ] || swift build ${CARILLON_BUILD_FLAGS:-} --product carillon-web-probe >&2
# the reload test runs the host itself (beside the probe)
[ -x "$bin/carillon" ] || swift build ${CARILLON_BUILD_FLAGS:-} --product carillon >&2
exec "$venv/bin/python" Tests/Browser/web_surface_test.py "$probe" "$@"
