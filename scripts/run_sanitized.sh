#!/usr/bin/env bash
# Build conceptwalk with AddressSanitizer + UndefinedBehaviorSanitizer and run the core tests
# against that build. The build goes into its own virtual environment and build directory, so the
# normal (editable) install is not touched.
#
#   scripts/run_sanitized.sh                      # tests/test_core_*.py, test_id_calls.py, test_compiled_calls.py, test_sparse_vectors.py, test_vector_topk.py, test_dense_delta.py, test_live_graph.py, test_hostile_live_graph.py, test_live_search.py, test_live_wrap.py, test_walk_render.py, test_hostile_session_view.py, test_link_suggest_ppr.py, test_coverage_rank.py
#   scripts/run_sanitized.sh tests -x             # any pytest arguments (the whole suite here)
#
# Environment: CW_ASAN_VENV (default /tmp/cw-asan), CW_ASAN_BUILD_DIR (default build/asan),
# PYTHON (interpreter for the venv, default python3). Needs gcc/g++ with libasan.
# Exit status: non-zero on a build failure, a test failure or any sanitizer report
# (ASan aborts the process; UBSan halts on the first error).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${CW_ASAN_VENV:-/tmp/cw-asan}
BUILD_DIR=${CW_ASAN_BUILD_DIR:-$ROOT/build/asan}
PY=${PYTHON:-python3}

start=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
VPY="$VENV/bin/python"

echo "== build requirements, runtime dependencies and test dependencies into $VENV"
# The package is installed below with --no-deps (the sanitized build must not be replaced), so its
# runtime dependencies (pyproject.toml [project].dependencies) are installed here by hand.
"$VPY" -m pip install -q "scikit-build-core>=0.11" "pybind11>=3" "cython>=3.0" "cython-cmake>=0.2" \
  "numpy>=2.0" "tqdm>=4.60" "PyStemmer>=2.2" "stopwords>=1.0.2" "pytest>=8" "hypothesis>=6.100" "jsonschema>=4.0" "networkx>=3.2" "scipy>=1.10"

echo "== sanitized build (CONCEPTWALK_SANITIZE=ON, build dir $BUILD_DIR)"
"$VPY" -m pip install -q --no-build-isolation --no-deps --force-reinstall \
  -Ccmake.define.CONCEPTWALK_SANITIZE=ON -Cbuild-dir="$BUILD_DIR" "$ROOT"

LIBASAN=$(gcc -print-file-name=libasan.so)
if [ ! -e "$LIBASAN" ]; then
  echo "libasan.so not found (gcc -print-file-name=libasan.so gave '$LIBASAN')" >&2
  exit 2
fi
PKG_DIR=$("$VPY" -c "import importlib.util as u; print(u.find_spec('conceptwalk').submodule_search_locations[0])")
CORE_SO=$(ls "$PKG_DIR"/_core*.so)
LINKED=$(ldd "$CORE_SO")  # captured first: `ldd | grep -q` trips pipefail when grep exits early
case "$LINKED" in
  *libasan*) ;;
  *) echo "$CORE_SO is not linked against libasan: the sanitized build did not happen" >&2; exit 2 ;;
esac
echo "== $CORE_SO links $(printf '%s\n' "$LINKED" | grep -oE 'lib(asan|ubsan)[^ ]*' | sort -u | tr '\n' ' ')"

if [ "$#" -eq 0 ]; then
  set -- "$ROOT"/tests/test_core_*.py "$ROOT"/tests/test_id_calls.py "$ROOT"/tests/test_compiled_calls.py "$ROOT"/tests/test_sparse_vectors.py "$ROOT"/tests/test_vector_topk.py "$ROOT"/tests/test_dense_delta.py "$ROOT"/tests/test_live_graph.py "$ROOT"/tests/test_hostile_live_graph.py "$ROOT"/tests/test_live_search.py "$ROOT"/tests/test_live_wrap.py "$ROOT"/tests/test_walk_render.py "$ROOT"/tests/test_hostile_session_view.py "$ROOT"/tests/test_link_suggest_ppr.py "$ROOT"/tests/test_coverage_rank.py
fi

# libstdc++ is preloaded too: the python binary does not link it, and without it ASan's
# __cxa_throw interceptor finds no real function and aborts on the first C++ exception
# ("CHECK failed: asan_interceptors.cpp ... real___cxa_throw", google/sanitizers#934).
LIBSTDCXX=$(g++ -print-file-name=libstdc++.so)
PRELOAD="$LIBASAN"
if [ -e "$LIBSTDCXX" ]; then PRELOAD="$LIBASAN $LIBSTDCXX"; fi

echo "== pytest $* (LD_PRELOAD=$PRELOAD)"
cd "$ROOT"
status=0
# --capture=sys: a sanitizer report written to fd 2 by a dying process must not be swallowed by
# pytest's fd capture.
LD_PRELOAD="$PRELOAD" \
  ASAN_OPTIONS="detect_leaks=0" \
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$ROOT/scripts/ubsan.supp" \
  "$VPY" -m pytest -q -p no:cacheprovider --capture=sys "$@" || status=$?
echo "== done in $(( $(date +%s) - start )) s, exit status $status"
exit "$status"
