#!/usr/bin/env bash
# CI-sized fuzzing: every cargo-fuzz target in fuzz/ for FUZZ_SECONDS (default 5) seconds,
# seeded from the committed corpus fuzz/corpus/<target>/ (read-only here: new inputs go to a
# temporary directory, so a CI run never dirties the checkout). A crash fails the script and
# leaves the input under fuzz/artifacts/<target>/.
#
# Stable Rust: cargo-fuzz's default AddressSanitizer needs `-Zsanitizer`, a nightly flag. With
# `--sanitizer none` cargo-fuzz passes only stable flags (`-Cpasses=sancov-module`,
# `-Cllvm-args=-sanitizer-coverage-*`, `--cfg fuzzing`), so libFuzzer's coverage guidance works
# on stable; what is lost is ASan's detection of memory errors in unsafe code — forgeloop's own
# code is safe Rust, and panics (the bugs we look for) are caught either way.
# FUZZ_SANITIZER=address opts into ASan on stable via RUSTC_BOOTSTRAP=1 (a separate, slower build).
#
#   scripts/fuzz-ci.sh                  # every target, 5 s each
#   FUZZ_SECONDS=600 scripts/fuzz-ci.sh pr_ref
#   FUZZ_RUNS=100000 scripts/fuzz-ci.sh # a fixed number of inputs from a fixed seed
#
# FUZZ_RUNS makes a run reproducible (libFuzzer's -runs with -seed=${FUZZ_SEED:-1}): the same
# corpus and code always try the same inputs, so CI cannot turn red on a lucky draw; new bugs
# are found by timed runs, and their inputs join the corpus as regression seeds.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
export CARGO_TERM_COLOR=never
seconds=${FUZZ_SECONDS:-5}
sanitizer=${FUZZ_SANITIZER:-none}

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi
# libFuzzer is C++; cargo-fuzz's libfuzzer-sys builds it with the system C++ compiler.
command -v c++ >/dev/null 2>&1 || { echo "fuzzing needs a C++ compiler (apt-get install g++)" >&2; exit 1; }
if [ "$sanitizer" != none ]; then
    export RUSTC_BOOTSTRAP=1
fi

targets=("$@")
[ ${#targets[@]} -eq 0 ] && mapfile -t targets < <(cargo fuzz list)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -n "${FUZZ_RUNS:-}" ]; then
    budget=(-runs="$FUZZ_RUNS" -seed="${FUZZ_SEED:-1}")
    label="$FUZZ_RUNS inputs (seed ${FUZZ_SEED:-1})"
else
    budget=(-max_total_time="$seconds")
    label="${seconds}s"
fi

started=$(date +%s)
cargo fuzz build --sanitizer "$sanitizer" >&2
echo "fuzz build: $(( $(date +%s) - started )) s" >&2
for target in "${targets[@]}"; do
    mkdir -p "$work/$target" "corpus/$target"
    echo "== fuzzing $target: $label ==" >&2
    status=0
    cargo fuzz run --sanitizer "$sanitizer" "$target" "$work/$target" "corpus/$target" -- \
        "${budget[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$work/$target.log" 2>&1 ||
        status=$?
    grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::new_units_added)' "$work/$target.log" >&2 || true
    if [ "$status" -ne 0 ]; then
        tail -n 40 "$work/$target.log" >&2
        echo "fuzz target $target failed (exit $status); the input is in fuzz/artifacts/$target/" >&2
        exit 1
    fi
done
echo "fuzzing passed: ${#targets[@]} targets, $label each, $(( $(date +%s) - started )) s in all" >&2
