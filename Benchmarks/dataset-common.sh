# Sourced by Benchmarks/dataset-render.sh and dataset-recipe.sh (from the
# repository's root): what both take from the environment, the release build
# of carillon, and the Python venv with the packages the caller names.
#   dataset_setup "import a, b" "pip-a pip-b"
FONT=${FONT:-/usr/share/sounds/sf2/TimGM6mb.sf2}
JOBS=${JOBS:-2}
SAMPLE=${SAMPLE:-100}

dataset_setup() {
    if [ -z "${CARILLON:-}" ]; then
        swift build -c release --product carillon >&2
        CARILLON=.build/release/carillon
    fi
    CARILLON=$(realpath "$CARILLON")
    local venv=bench-out/dataset-venv
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    # shellcheck disable=SC2086   # the package list is words
    "$venv/bin/python" -c "$1" 2>/dev/null || "$venv/bin/pip" install -q $2 >&2
    PY=$PWD/$venv/bin/python   # not realpath: that resolves the venv away
}

# dataset_sample CORPUS LIST: the SAMPLE shortest files of CORPUS by pretty_midi (those it reads), a path a line.
dataset_sample() {
    find -L "$1" -type f \( -iname '*.mid' -o -iname '*.midi' \) | "$PY" Benchmarks/dataset_render.py select "$SAMPLE" > "$2"
}
