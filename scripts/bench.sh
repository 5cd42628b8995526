#!/usr/bin/env bash
# Runs forgeloop's benchmarks (release build), one heavy part at a time, and prints one
# Markdown table with the design §10 targets or the reference tool's method as the baseline.
#
#   scripts/bench.sh                      # all: redact checkout tui next_list sandbox
#   scripts/bench.sh redact_fp            # false positives: secret masks per MB of text without secrets
#   scripts/bench.sh checkout next_list   # some
#   scripts/bench.sh checkout ~/src/rust-analyzer   # checkout, also on a local repository (its HEAD)
#   scripts/bench.sh real_crate           # semver as PRs through forge cycles vs local cargo test,
#                                         # and the egress proxy on a 50 MiB download (a few minutes)
#   scripts/bench.sh replay               # real commits of 5 projects as PRs: the checks' false flags
#                                         # (an hour or more; needs their git directories, see
#                                         # benches/replay.rs; not in the default list)
#   scripts/bench.sh checks               # 50 github-checks waits on the emulator (about 5 minutes;
#                                         # not in the default list: it is mostly waiting)
#
# Raw output of each part goes to $BENCH_OUT (default target/bench-logs/). Knobs:
#   FORGELOOP_BENCH_COMMITS / FORGELOOP_BENCH_FILES  checkout repository (default 20000 / 5000,
#                                                    generated with git fast-import)
#   FORGELOOP_BENCH_ROUNDS                           checkout rounds, medians (default 5)
#   FORGELOOP_BENCH_DIR                              where generated data lives (default: $TMPDIR)
#   FORGELOOP_BENCH_MB                               redaction log size (default 100)
#   FORGELOOP_FP_REGISTRY_MB                         redact_fp: MB of ~/.cargo/registry/src *.rs (default 1000)
#   FORGELOOP_BENCH_CHECKS_SECS                      checks: measurement window (default 180; after a
#                                                    30 s warm-up, FORGELOOP_BENCH_CHECKS_WARMUP_SECS);
#                                                    its numbers also go to $BENCH_OUT/checks.json
#   BENCH_REUSE=1                                    build the table from the raw logs of an
#                                                    earlier run where they exist (no re-run)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
out=${BENCH_OUT:-target/bench-logs}
mkdir -p "$out"
parts=()
repos=()
# A directory argument is a local repository for the checkout part.
for arg in "$@"; do
    if [ -d "$arg" ]; then repos+=("$(cd "$arg" && pwd)"); else parts+=("$arg"); fi
done
if [ ${#parts[@]} -eq 0 ]; then
    if [ ${#repos[@]} -gt 0 ]; then parts=(checkout); else parts=(redact checkout tui next_list sandbox); fi
fi

rows=()
row() { rows+=("| $1 | $2 | $3 | $4 |"); }
# ratio A B: A/B with two decimals ("-" when either is missing).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }
# bencher_ms LOG NAME-REGEX: criterion's --output-format bencher line for NAME, in ms.
bencher_ms() {
    sed -nE "s#^test ($2) \.\.\. bench: +([0-9,]+) ns/iter.*#\2#p" "$1" | head -1 | tr -d , |
        awk 'NF { printf "%.3f", $1 / 1e6 }'
}
step() { printf '\n== %s (%s) ==\n' "$1" "$(date +%T)" >&2; }
# measure CMD...: runs a bench into $log, or with BENCH_REUSE=1 replays the log already there.
measure() {
    if [ "${BENCH_REUSE:-0}" = 1 ] && [ -s "$log" ]; then
        echo "(reusing $log)" >&2
        cat "$log" >&2
    else
        "$@" 2>&1 | tee "$log" >&2
    fi
}

# redact_fp runs a test binary (debug build), not a bench: no release build for it alone.
[ "${parts[*]}" = redact_fp ] || cargo bench --no-run >&2

for part in "${parts[@]}"; do
    log="$out/$part.log"
    case "$part" in
    redact)
        step "redaction throughput, ${FORGELOOP_BENCH_MB:-100} MB realistic log"
        FORGELOOP_BENCH_QUICK=1 measure cargo bench --bench redact
        for kind in whole-text stream; do
            wall=$(sed -nE "s/^ *${kind}[^:+]*: +([0-9.]+) MB\/s wall.*/\1/p" "$log" | head -1)
            cpu=$(sed -nE "s/^ *${kind}[^:+]*: .* ([0-9.]+) MB\/s per CPU-second.*/\1/p" "$log" | head -1)
            row "redaction, $kind, full rule set" "$wall MB/s wall ($cpu MB/s per CPU-second)" "target ≥ 300 MB/s" \
                "$(ratio "$wall" 300)×"
        done
        for kind in whole-text stream; do
            wall=$(sed -nE "s/^ *${kind} \+ 20 user rules: +([0-9.]+) MB\/s wall.*/\1/p" "$log" | head -1)
            cpu=$(sed -nE "s/^ *${kind} \+ 20 user rules: .* ([0-9.]+) MB\/s per CPU-second.*/\1/p" "$log" | head -1)
            row "redaction, $kind, full rule set + 20 user rules" "$wall MB/s wall ($cpu MB/s per CPU-second)" "-" "-"
        done
        ;;
    redact_fp)
        step "false positives: secret masks per MB (source, compiler/CI output, cargo registry)"
        FORGELOOP_FP_REGISTRY_MB=${FORGELOOP_FP_REGISTRY_MB:-1000} \
            measure cargo test --test redact_false_positives -- --ignored --nocapture report_masks_per_mb
        while IFS= read -r line; do
            name=${line%%:*}
            figure=$(sed -nE 's/.*: ([0-9]+ masks in [0-9.]+ MB = [0-9.]+ masks\/MB).*/\1/p' <<<"$line")
            target="target 0"
            [ "$name" = "repository source" ] || [ "$name" = "cargo registry *.rs" ] && target="target ≤ 0.1 masks/MB"
            row "redaction false positives, $name" "$figure" "$target" "-"
        done < <(grep -E '^[A-Za-z/* .]+: [0-9]+ masks in' "$log")
        ;;
    checkout)
        commits=${FORGELOOP_BENCH_COMMITS:-20000}
        files=${FORGELOOP_BENCH_FILES:-5000}
        sources=("")
        [ ${#repos[@]} -gt 0 ] && sources+=("${repos[@]}")
        for source in "${sources[@]}"; do
            if [ -z "$source" ]; then
                label="$commits commits × $files files"
                log="$out/checkout.log"
            else
                label="$(basename "$source") ($(git -C "$source" rev-list --count HEAD) commits)"
                log="$out/checkout-$(basename "$source").log"
            fi
            step "checkout over smart HTTP, $label"
            FORGELOOP_BENCH_COMMITS=$commits FORGELOOP_BENCH_FILES=$files FORGELOOP_BENCH_REPO=$source \
                measure cargo bench --bench checkout
            med() { sed -nE "s/^ +$1 +([0-9.]+) ms$/\1/p" "$log" | head -1; }
            # got NAME: "BYTES OBJECTS" the method received in the last round.
            got() { sed -nE "s/^ +received $1 +([0-9]+) bytes +([0-9]+) objects$/\1 \2/p" "$log" | head -1; }
            said() { awk -v b="$1" -v o="$2" 'BEGIN { printf "%.2f MiB, %d objects", b / 1048576, o }'; }
            first=$(med first_iteration_prepare)
            second=$(med second_iteration_prepare)
            floor=$(med depth1_floor_git_cli)
            ref=$(med reference_git_cli_full_clone)
            read -r first_b first_o <<<"$(got first_iteration_prepare)"
            read -r second_b second_o <<<"$(got second_iteration_prepare)"
            read -r floor_b floor_o <<<"$(got depth1_floor_git_cli)"
            read -r ref_b ref_o <<<"$(got reference_git_cli_full_clone)"
            # The bench asserts this too; the table is never built from a run that broke it.
            if [ -z "$second_o" ] || [ "$second_o" -lt 1 ] || [ "$second_o" -gt 8 ]; then
                echo "second iteration received '${second_o}' objects for one new commit (expected 1 to 8)" >&2
                exit 1
            fi
            floor_said="depth-1 floor (git fetch --depth 1 + checkout): $floor ms, $(said "$floor_b" "$floor_o")"
            row "checkout, first iteration (new mirror, depth 1), $label" \
                "$first ms, $(said "$first_b" "$first_o")" "$floor_said (target ≤ 1.5×)" "$(ratio "$first" "$floor")×"
            row "checkout, second iteration (1 new commit), $label" \
                "$second ms, $(awk -v b="$second_b" 'BEGIN { printf "%.1f KiB", b / 1024 }'), $second_o objects" \
                "$floor_said (target ≤ 1.5×)" "$(ratio "$second" "$floor")×"
            row "reference tool: git clone --no-checkout + checkout --detach, $label" \
                "$ref ms, $(said "$ref_b" "$ref_o")" "$floor_said" "$(ratio "$ref" "$floor")×"
            row "checkout, first iteration vs the reference tool's full clone, $label" "$first ms" \
                "full clone: $ref ms" "$(ratio "$first" "$ref")×"
            alone=$(med first_iteration_head_alone_pr2)
            merged=$(med first_iteration_merge_pr2)
            stale=$(med first_iteration_merge_stale_pr3)
            deepened=$(sed -nE 's/^ +the stale PR.s merge deepened the mirror in ([0-9]+) more fetches$/\1/p' "$log" | head -1)
            row "checkout of the merge into the base tip (PR one commit on main), first iteration, $label" \
                "$merged ms" "the head alone: $alone ms (target ≤ 1.1×)" "$(ratio "$merged" "$alone")×"
            row "checkout of the merge, a PR 100 commits behind main, first iteration, $label" \
                "$stale ms ($deepened deepening fetches)" "the head alone: $alone ms" "$(ratio "$stale" "$alone")×"
        done
        ;;
    tui)
        step "control room, 1,000 cycles, 1 GiB log"
        measure cargo bench --bench tui -- --output-format bencher
        frame=$(bencher_ms "$log" "tui frame, 1000 cycles, 200x60")
        page=$(bencher_ms "$log" "tui frame after a page down, 1000 cycles, 200x60")
        change=$(bencher_ms "$log" "tui state change to redraw, 1000 cycles")
        peak=$(sed -nE 's/^RSS with .* log open at its end: .*\(peak ([0-9]+) KiB\).*/\1/p' "$log" | head -1)
        search_peak=$(sed -nE 's/^RSS after searching .*\(peak ([0-9]+) KiB\).*/\1/p' "$log" | head -1)
        row "TUI frame, 1,000 cycles, 200×60" "$frame ms" "target ≤ 10 ms" "$(ratio "$frame" 10)×"
        row "TUI frame after a page down (every cell changes)" "$page ms" "target ≤ 10 ms" "$(ratio "$page" 10)×"
        row "TUI state change to redraw" "$change ms" "target ≤ 100 ms" "$(ratio "$change" 100)×"
        peak_mb=$(awk -v k="$peak" 'BEGIN { if (k != "") printf "%.1f", k / 1024 }')
        search_mb=$(awk -v k="$search_peak" 'BEGIN { if (k != "") printf "%.1f", k / 1024 }')
        row "TUI peak RSS, 1,000 cycles + 1 GiB log open (after a full search)" \
            "$peak_mb MiB ($search_mb MiB)" "target ≤ 60 MB" "$(ratio "$search_mb" 57.2)×"
        ;;
    next_list)
        step "forgeloop next / list, 1,000 cycles, real binary"
        measure cargo bench --bench next_list -- --output-format bencher
        floor=$(bencher_ms "$log" "headless/process_floor_bin_true")
        next=$(bencher_ms "$log" "headless/next_[0-9]+_cycles")
        list=$(bencher_ms "$log" "headless/list_[0-9]+_cycles")
        row "forgeloop next --state X (process start included)" "$next ms" "target ≤ 20 ms" "$(ratio "$next" 20)×"
        row "forgeloop list, 1,000 cycles (process start included)" "$list ms" "-" "-"
        row "process floor: /bin/true spawned the same way" "$floor ms" "-" "-"
        ;;
    sandbox)
        # bubblewrap is the yardstick, measured in the same run (Debian's package).
        command -v bwrap >/dev/null || apt-get install -y bubblewrap >/dev/null 2>&1 || true
        step "sandbox setup per command: true, unsandboxed, in each tier and in bubblewrap"
        measure cargo bench --bench sandbox -- --output-format bencher
        # The landlock tier never runs a test for root: as root, the same bench binary runs
        # again as an ordinary account (created if missing) for both tiers as a user sees them.
        user_log="$out/sandbox-user.log"
        if [ "$(id -u)" = 0 ] && [ "${BENCH_REUSE:-0}" != 1 ]; then
            id forgeloop-sbx >/dev/null 2>&1 || useradd --no-create-home --shell /bin/sh forgeloop-sbx
            bin=$(ls -t target/release/deps/sandbox-* | grep -v '\.d$' | head -1)
            scratch=$(mktemp -d) && chown forgeloop-sbx "$scratch" && chmod 755 "$scratch"
            (cd "$scratch" && setpriv --reuid="$(id -u forgeloop-sbx)" --regid="$(id -g forgeloop-sbx)" --clear-groups \
                env -i PATH=/usr/bin:/bin HOME="$scratch" TMPDIR="$scratch" "$OLDPWD/$bin" --bench --output-format bencher) \
                2>&1 | tee "$user_log" >&2
            rm -rf "$scratch"
        fi
        for who in root user; do
            file=$log
            [ "$who" = user ] && { [ -s "$user_log" ] || continue; file=$user_log; }
            [ "$(id -u)" = 0 ] || [ "$who" = root ] || continue
            as=$([ "$(id -u)" = 0 ] && echo "as $who" || echo "as $(id -un)")
            plain=$(bencher_ms "$file" "sandbox/unsandboxed_true")
            for tier in namespaces landlock bwrap; do
                t=$(bencher_ms "$file" "sandbox/${tier}_true")
                [ -n "$t" ] || continue
                cost=$(awk -v a="$t" -v b="$plain" 'BEGIN { if (a != "" && b != "") printf "%.3f", a - b }')
                label="sandbox setup per command, $tier tier, $as (true: $t ms)"
                [ "$tier" = bwrap ] && label="bubblewrap --unshare-all --die-with-parent, same true, $as ($t ms), same run"
                row "$label" "$cost ms" "unsandboxed true: $plain ms (target cost ≤ 15 ms)" "$(ratio "$cost" 15)×"
            done
        done
        ;;
    checks)
        step "${FORGELOOP_BENCH_CHECKS_PRS:-50} github-checks waits, default polling, ${FORGELOOP_BENCH_CHECKS_SECS:-180} s window"
        FORGELOOP_BENCH_DUMP="$out/checks.json" measure cargo bench --bench checks
        # The bench fails (and so does this script, pipefail) unless every verdict is right.
        # field LABEL-REGEX: what the bench printed after the label.
        field() { sed -nE "s/^ +$1: +//p" "$log" | head -1; }
        n=$(sed -nE 's/^([0-9]+) github-checks waits.*/\1/p' "$log" | head -1)
        window=$(sed -nE 's/.*; window ([0-9.]+) s after a ([0-9]+) s warm-up$/\1 s after a \2 s warm-up/p' "$log" | head -1)
        total=$(field 'requests\/min, total' | cut -d' ' -f1)
        checks=$(field 'requests\/min, check-runs')
        counted=$(field 'requests\/min, not 304' | cut -d' ' -f1)
        nm=$(sed -nE 's/.* = ([0-9.]+%)\)$/\1/p' <<<"$checks")
        row "$n github-checks waits, API requests ($window)" \
            "$total/min in all, ${checks%% *}/min to check-runs, $nm of them 304; $counted/min counted" \
            "GitHub's rate limit: 5,000/h = 83.3/min per token (a 304 is not counted)" \
            "$(ratio "$counted" 83.33)×"
        row "$n github-checks waits, CPU of the $n processes" "$(field "CPU, $n processes" | sed -E 's/ \(.*//')" "-" "-"
        row "$n github-checks waits, RSS per process" \
            "$(field 'RSS per process'); unshared (RssAnon) $(field 'RssAnon \(unshared\)' | sed -E 's/;.*//')" "-" "-"
        verdicts=$(field 'verdicts')
        latency=$(sed -nE 's/.*, ([0-9.]+ s median \/ [0-9.]+) s max after.*/\1 s max/p' <<<"$verdicts")
        row "$n github-checks waits, verdict after the checks completed" \
            "${verdicts%% *} correct; $latency" "poll_max_s: 60 s" \
            "$(ratio "$(sed -nE 's/.* \/ ([0-9.]+) s max/\1/p' <<<"$latency")" 60)×"
        ;;
    real_crate)
        step "a real crate as a PR (cargo test, cold then incremental) and the egress proxy on a 50 MiB setup"
        measure cargo bench --bench real_crate
        crate=$(sed -nE 's/^crate: (.*)/\1/p' "$log" | head -1)
        stack=$(sed -nE 's/^sandbox: .*, (.*) stack,.*/\1/p' "$log" | head -1)
        cold=$(sed -nE 's/^warming: .*local cold ([0-9.]+) s.*/\1/p' "$log" | head -1)
        warming=$(sed -nE 's/^warming: the base layer ([0-9.]+) s.*/\1/p' "$log" | head -1)
        fl1=$(sed -nE 's/^iteration 1 of the first PR.*forgeloop ([0-9.]+) s.*/\1/p' "$log" | head -1)
        in1=$(sed -nE 's/^iteration 1 of the first PR.*cargo test inside: ([0-9.]+) s.*/\1/p' "$log" | head -1)
        flb=$(sed -nE 's/^iteration 1 of a new PR.*forgeloop ([0-9.]+) s.*/\1/p' "$log" | head -1)
        inb=$(sed -nE 's/^iteration 1 of a new PR.*cargo test inside: ([0-9.]+) s.*/\1/p' "$log" | head -1)
        lwb=$(sed -nE 's/^iteration 1 of a new PR.*local warm after the same change ([0-9.]+) s.*/\1/p' "$log" | head -1)
        rounds=$(sed -nE 's/^iteration 2\+ \(([0-9]+) rounds.*/\1/p' "$log" | head -1)
        fl2=$(sed -nE 's/^iteration 2\+ .*forgeloop median ([0-9.]+) s.*/\1/p' "$log" | head -1)
        in2=$(sed -nE 's/^iteration 2\+ .*cargo test inside: ([0-9.]+) s.*/\1/p' "$log" | head -1)
        warm=$(sed -nE 's/^iteration 2\+ .*local warm median ([0-9.]+) s.*/\1/p' "$log" | head -1)
        if [ -n "$crate" ]; then
            row "$crate: warming the repository's base layer (the base branch's cargo test, $stack stack)" \
                "$warming s" "local cold cargo test: $cold s" "$(ratio "$warming" "$cold")×"
            row "$crate as the repository's first PR, iteration 1, the warming included (cargo test inside: $in1 s)" \
                "$fl1 s" "local cold cargo test: $cold s" "$(ratio "$fl1" "$cold")×"
            row "$crate as a new PR on the warm base layer, iteration 1 (cargo test inside: $inb s)" "$flb s" \
                "local warm cargo test after the same change: $lwb s (target ≤ 2×)" "$(ratio "$flb" "$lwb")×"
            row "$crate as a PR, iteration 2 after a one-line change, median of $rounds (cargo test inside: $in2 s)" \
                "$fl2 s" "local warm cargo test after the same change: $warm s (target ≤ 1.5×)" "$(ratio "$fl2" "$warm")×"
        fi
        fixn=$(sed -nE 's/^from a pushed fix to READY_TO_MERGE \(([0-9]+) PRs.*/\1/p' "$log" | head -1)
        flr=$(sed -nE 's/^from a pushed fix to READY_TO_MERGE .*forgeloop median ([0-9.]+) s.*/\1/p' "$log" | head -1)
        lay=$(sed -nE 's/^from a pushed fix to READY_TO_MERGE .*the layered run ([0-9.]+) s.*/\1/p' "$log" | head -1)
        lwr=$(sed -nE 's/^from a pushed fix to READY_TO_MERGE .*local warm median ([0-9.]+) s.*/\1/p' "$log" | head -1)
        if [ -n "$flr" ]; then
            row "$crate: from a pushed fix to READY_TO_MERGE, the pass confirmed from the base layer, median of $fixn PRs (the layered run: $lay s)" \
                "$flr s" "local warm cargo test after the same change: $lwr s (target ≤ 2×)" "$(ratio "$flr" "$lwr")×"
        fi
        while IFS= read -r line; do
            what=$(sed -nE 's/^setup step, (.*) \([0-9]+ rounds each\).*/\1/p' <<<"$line")
            allow=$(sed -nE 's/.*allowlist \(through the proxy\) median ([0-9.]+) s.*/\1/p' <<<"$line")
            open=$(sed -nE 's/.*open \(host network\) median ([0-9.]+) s.*/\1/p' <<<"$line")
            row "setup step, $what from an index on 127.0.0.1, through the egress proxy (allowlist)" "$allow s" \
                "the same step with the host network (open): $open s (target ≤ 1.05×)" "$(ratio "$allow" "$open")×"
        done < <(grep -E '^setup step, ' "$log")
        ;;
    replay)
        step "real commits of five projects replayed as PRs: how often the checks of a pass hold honest work (an hour or more)"
        measure cargo bench --bench replay
        sed -n '/^| project |/,$p' "$log"
        ;;
    *)
        echo "unknown part $part (redact, redact_fp, checkout, tui, next_list, sandbox, checks, real_crate, replay)" >&2
        exit 2
        ;;
    esac
done

model=$(lscpu 2>/dev/null | sed -nE 's/^Model name: +//p' | head -1)
mem=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
printf '\nMachine: %s, %s cores (nproc), %s RAM; %s; %s\n\n' "${model:-unknown CPU}" "$(nproc)" "$mem" \
    "$(rustc --version)" "$(date -u +%Y-%m-%d)"
echo "| benchmark | result | baseline | ratio |"
echo "|---|---:|---|---:|"
printf '%s\n' "${rows[@]}"
