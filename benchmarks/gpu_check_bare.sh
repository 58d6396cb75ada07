#!/usr/bin/env bash
# The GPU check on a bare CUDA machine (`make gpu-check BARE=1`): this machine's own Python,
# torch and transformers; no virtual environment, no network, no vLLM.
#
#   benchmarks/gpu_check_bare.sh [ARGS of python -m recode_lib.runner.gpu_check_bare]
#   PYTHON=python3 WHEELS=wheels TARGET=.bare/site-packages benchmarks/gpu_check_bare.sh
#
# The packages it lacks (`python -m recode_lib.runner.gpu_check_bare --preflight` names them and prints
# the `pip download` line for a connected machine) are installed from the wheels in $WHEELS with
# --no-deps into $TARGET, which goes first on PYTHONPATH (with the checkout, so recode_lib needs
# no install). Keep "site-packages" in TARGET's path: dill (through datasets' fingerprinting)
# pickles modules found elsewhere by value, which fails on pyarrow's types. Without pip, each
# wheel is unzipped into $TARGET (what pip --target does for these packages).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
WHEELS=${WHEELS:-wheels}
TARGET=${TARGET:-.bare/site-packages}
export PYTHONPATH="$PWD/$TARGET:$PWD${PYTHONPATH:+:$PYTHONPATH}"

missing=$("$PYTHON" -m recode_lib.runner.gpu_check_bare --missing-wheels "$@")
if [ -n "$missing" ]; then
    if ! ls "$WHEELS"/*.whl >/dev/null 2>&1; then
        "$PYTHON" -m recode_lib.runner.gpu_check_bare --preflight "$@" || true
        echo "gpu-check (bare): no wheels in $WHEELS/ for the packages above; bring them (the" \
             "pip download line), or set WHEELS=DIR" >&2
        exit 2
    fi
    mkdir -p "$TARGET"
    echo "gpu-check (bare): installing from $WHEELS/ into $TARGET:" $missing >&2
    if "$PYTHON" -m pip --version >/dev/null 2>&1; then
        # shellcheck disable=SC2086  # one requirement per word
        PIP_ROOT_USER_ACTION=ignore "$PYTHON" -m pip install -q --no-index --find-links "$WHEELS" --no-deps --target "$TARGET" $missing
    else
        for req in $missing; do
            name=$(echo "${req%%==*}" | tr '-' '_')
            whl=$(ls "$WHEELS"/*.whl | grep -i "/${name}-${req##*==}-" | head -1 || true)
            if [ -z "$whl" ]; then echo "gpu-check (bare): no wheel for $req in $WHEELS/" >&2; exit 2; fi
            "$PYTHON" -m zipfile -e "$whl" "$TARGET"
        done
    fi
fi
exec "$PYTHON" -m recode_lib.runner.gpu_check_bare "$@"
