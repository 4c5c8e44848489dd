#!/usr/bin/env bash
# Every test of bvhkit, from a fresh Debian machine: installs what the tests
# need (system packages, when run as root; otherwise it names what is
# missing and the tests that need it say SKIPPED), then runs format, lint,
# the tests, the docs and a fuzz smoke run. `.ci/run` calls exactly this.
#
# Needs: Rust 1.95 or newer (edition 2024) with rustfmt and clippy.
# Day to day, `cargo test -p bvhkit` (the core) or `cargo test --workspace`
# is quicker; this script is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}

# System packages: Chromium for the browser-player test, ffmpeg for the MP4
# test, Xvfb + Mesa (and the X11 client libraries winit/glutin load at run
# time) for the desktop player test, Java for the Spark example job's test
# (crates/bvhkit-dataset/tests/python/test_spark.py), Blender for the FBX
# export's import check (crates/bvhkit-fbx/tests/blender.rs). No -dev
# package is needed to build.
pkgs=(chromium ffmpeg xvfb xauth libgl1-mesa-dri libgl1 libegl1 libxkbcommon-x11-0 libxcursor1 libxrandr2 libxi6 default-jre-headless blender)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
complete=1
if ((${#missing[@]})); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "test: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    complete=0
    echo "test: MISSING system packages: ${missing[*]}"
    echo "test:   install them with: sudo apt-get install ${missing[*]}"
    echo "test:   until then the tests that need them print SKIPPED"
  fi
fi

# npm packages for the glTF export test (Khronos glTF-Validator, three.js),
# pinned by crates/bvhkit-gltf/tests/js/package-lock.json.
if command -v npm >/dev/null; then
  echo "test: npm ci (crates/bvhkit-gltf/tests/js)"
  (cd crates/bvhkit-gltf/tests/js && npm ci --no-audit --no-fund >/dev/null)
  # FBX2glTF (Autodesk FBX SDK) and the validator for the FBX export test,
  # pinned by crates/bvhkit-fbx/tests/js/package-lock.json.
  echo "test: npm ci (crates/bvhkit-fbx/tests/js)"
  (cd crates/bvhkit-fbx/tests/js && npm ci --no-audit --no-fund >/dev/null)
  # three.js's BVHLoader for the --portable test (crates/bvhkit-cli/tests/cli/portable.rs).
  echo "test: npm ci (crates/bvhkit-cli/tests/js)"
  (cd crates/bvhkit-cli/tests/js && npm ci --no-audit --no-fund >/dev/null)
else
  complete=0
  echo "test: MISSING node and npm (node 20 or newer); the glTF and FBX export and three.js BVH tests print SKIPPED"
fi

for tool in rustfmt clippy-driver; do
  command -v "$tool" >/dev/null || { echo "test: MISSING $tool (rustup component add ${tool%-driver})"; exit 2; }
done

echo "test: cargo fmt"
cargo fmt --all --check

echo "test: cargo clippy"
cargo clippy --workspace --all-targets --all-features -- -D warnings
# The core without its default `parallel` feature (one thread, no rayon)
# must build clean too.
cargo clippy -p bvhkit --lib --no-default-features -- -D warnings

# A virtual display for the desktop player's screenshot test.
if [ -z "${DISPLAY:-}" ] && command -v Xvfb >/dev/null; then
  Xvfb :99 -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb_pid=$!
  trap 'kill $xvfb_pid 2>/dev/null || true' EXIT
  export DISPLAY=:99
  for _ in $(seq 50); do [ -e /tmp/.X11-unix/X99 ] && break; sleep 0.1; done
fi
export LIBGL_ALWAYS_SOFTWARE=1
# Everything is installed: a test that cannot run is a failure, not a skip
# (CI=true has the same effect; see bvhkit_testdata::skip).
if ((complete)); then
  export BVHKIT_REQUIRE_ALL=1
fi

echo "test: cargo test"
cargo test --workspace --all-features

# The Python package (crates/bvhkit-py): a venv with the build and test
# tools from PyPI (maturin, pytest, numpy, scipy for the quality metrics'
# references, pybvh, ruff, mypy for stubtest),
# the wheel built by maturin with this toolchain (release,
# a few minutes cold), then ruff and pytest. pytest's exit 5 (no tests
# collected) fails the script like any other non-zero exit (set -e).
echo "test: python package"
python=${PYTHON:-python3}
"$python" -c 'import sys; assert sys.version_info >= (3, 10), sys.version' \
  || { echo "test: the Python package needs CPython 3.10 or newer ($python)"; exit 2; }
if ! "$python" -m venv --help >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  else
    echo "test: MISSING python3-venv (sudo apt-get install python3-venv)"; exit 2
  fi
fi
"$python" -m venv target/py-venv
venv=$PWD/target/py-venv/bin
"$venv/pip" install -q --disable-pip-version-check maturin pytest numpy scipy pybvh ruff mypy oneeurofilter \
  pyarrow duckdb pandas pyspark
"$venv/pip" install -q --disable-pip-version-check --force-reinstall --no-deps ./crates/bvhkit-py
(cd crates/bvhkit-py && "$venv/ruff" check . && "$venv/ruff" format --check .)
# The type stubs match the installed module's real signatures.
(cd target && "$venv/python" -m mypy.stubtest bvhkit)
"$venv/python" -m pytest -q crates/bvhkit-py/tests
# The dataset export (bvh export -o OUT.parquet / OUT.npz) read back with
# pyarrow, DuckDB and NumPy, and the Spark example job in local mode (Java
# from default-jre-headless above; without it the test fails visibly).
(cd crates/bvhkit-dataset && "$venv/ruff" check . && "$venv/ruff" format --check .)
PYSPARK_PYTHON="$venv/python" "$venv/python" -m pytest -q crates/bvhkit-dataset/tests/python

echo "test: docs"
RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --all-features
# The core's implementation notes link to its private items too: checked so
# that they do not rot (a link to a test-only function, a name both a module
# and a function).
RUSTDOCFLAGS=-Dwarnings cargo doc -p bvhkit --no-deps --all-features --document-private-items

# Fuzz smoke run: both targets build (cargo-fuzz, nightly flags unlocked on
# stable by RUSTC_BOOTSTRAP=1, see fuzz/README.md) and run about 60 s in all
# from the seed corpus; a crash fails the step (libFuzzer exits non-zero and
# leaves the input in fuzz/artifacts/). Installing cargo-fuzz when absent
# adds about 2 minutes (1 min of CPU); the sanitizer build about 1.5 min of
# CPU. FUZZ_SECONDS=0 skips the run (the targets are still built).
if [ -d fuzz ]; then
  if ! command -v cargo-fuzz >/dev/null; then
    echo "test: installing cargo-fuzz"
    cargo install cargo-fuzz --locked
  fi
  echo "test: fuzz smoke run"
  secs=${FUZZ_SECONDS:-60}
  (
    cd fuzz
    ./seed_corpus.sh >/dev/null
    mkdir -p corpus/expand
    RUSTC_BOOTSTRAP=1 cargo fuzz build
    if [ "$secs" -gt 0 ]; then
      RUSTC_BOOTSTRAP=1 cargo fuzz run parse corpus/parse -- \
        -dict=parse.dict -max_total_time=$((secs / 2)) -rss_limit_mb=4096
      RUSTC_BOOTSTRAP=1 cargo fuzz run expand corpus/expand -- \
        -max_total_time=$((secs - secs / 2)) -rss_limit_mb=4096 -max_len=4096 -len_control=0
    fi
  )
fi
echo "test: all green"
