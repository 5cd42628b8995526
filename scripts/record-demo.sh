#!/usr/bin/env bash
# Records `forgeloop demo` in a real terminal and writes the README's media:
#   docs/media/demo.cast  asciicast v2: every byte the demo wrote to its pty, with its timing
#                         (pauses over 1.5 s cut to 1.5 s)
#   docs/media/demo.svg   an animated SVG of screen captures taken during the same run
#
#   scripts/record-demo.sh                                      # builds target/debug/forgeloop
#   FORGELOOP_BIN=target/release/forgeloop scripts/record-demo.sh
#   RECORD_KEEP=1 scripts/record-demo.sh     # keeps the raw log, timing and captures (says where)
#
# The demo runs under util-linux `script` (which logs the pty's output and its timing) inside a
# private tmux server, which gives it a terminal of a fixed size, presses the keys and takes the
# screen captures. Needs tmux, `script` and python3 (standard library only). tests/docs_media.rs
# checks the committed files.
set -euo pipefail
cd "$(dirname "$0")/.."

COLS=120 # tests/docs_media.rs checks this size
ROWS=34
SPEED=1.5 # the cycles take about 15 s; with the keys below the recording lasts about 45 s
OUT=docs/media

for tool in tmux script python3; do
    command -v "$tool" >/dev/null || { echo "record-demo.sh needs $tool" >&2; exit 1; }
done

if [[ -n ${FORGELOOP_BIN:-} ]]; then
    bin=$(realpath "$FORGELOOP_BIN")
else
    cargo build --bin forgeloop
    bin=$(realpath "${CARGO_TARGET_DIR:-target}/debug/forgeloop")
fi
[[ -x $bin ]] || { echo "not an executable: $bin" >&2; exit 1; }

work=$(mktemp -d)
socket=forgeloop-record-$$
poller=
cleanup() {
    if [[ -n $poller ]]; then
        touch "$work/stop"
        wait "$poller" 2>/dev/null || true
    fi
    tmux -L "$socket" kill-server 2>/dev/null || true
    if [[ -n ${RECORD_KEEP:-} ]]; then echo "raw recording kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
mkdir -p "$work/home" "$work/frames"

tm() { tmux -L "$socket" "$@"; }
screen() { tm capture-pane -p -t rec; }
key() { tm send-keys -t rec "$@"; }

# Types text a character at a time, as a person would (it shows in the filter line).
type_text() {
    local text=$1 i
    for ((i = 0; i < ${#text}; i++)); do
        key -l "${text:i:1}"
        sleep 0.07
    done
}

# True when one line of the screen contains every argument.
has_line() {
    local line needle ok
    while IFS= read -r line; do
        ok=1
        for needle in "$@"; do [[ $line == *"$needle"* ]] || ok=0; done
        ((ok)) && return 0
    done < <(screen)
    return 1
}

# Waits (up to 60 s) until `check ARGS…` succeeds; otherwise shows the screen and fails.
wait_until() {
    local deadline=$((SECONDS + 60))
    until "$@"; do
        if ((SECONDS > deadline)); then
            echo "timed out waiting for: $*" >&2
            screen >&2
            exit 1
        fi
        sleep 0.1
    done
}

# Every cycle has ended: the header counts only final groups (nothing waiting or running).
all_ended() {
    local header
    header=$(screen | head -n 1)
    [[ $header == *"✓ 8 ready"* && $header == *"✗ 1 blocked"* && $header == *"⊘ 1 ended"* ]] &&
        [[ $header != *waiting* && $header != *confirm* && $header != *running* ]]
}

# A clean environment: no token, no user config (the default theme), a known TERM and shell
# (`script -c` runs the command with $SHELL).
# The sandbox in $work (kept by --home, removed with $work), so the recording can write the
# allowlist entry into its config.toml by hand, as the person does.
sandbox="$work/sandbox"
demo="$(printf %q "$bin") demo --speed $SPEED --home $(printf %q "$sandbox")"
inner="cd / && env -u GH_TOKEN -u GITHUB_TOKEN -u FORGELOOP_HOME -u FORGELOOP_CONFIG -u FORGELOOP_REGISTRY \
-u FORGELOOP_GITHUB_API -u XDG_CONFIG_HOME -u XDG_STATE_HOME -u NO_COLOR \
HOME=$(printf %q "$work/home") TERM=xterm-256color SHELL=/bin/sh \
script -q -f -e --log-out $(printf %q "$work/out.log") --log-timing $(printf %q "$work/timing.log") \
-c $(printf %q "$demo"); echo \$? > $(printf %q "$work/status")"

started=$(date +%s)
tm -f /dev/null new-session -d -s rec -x "$COLS" -y "$ROWS" "$inner"
tm set-option -t rec status off
tm set-option -t rec remain-on-exit on

# Screen captures (with colours) every 0.25 s until told to stop; the index gets a line only
# once its capture is complete.
poll() {
    local n=0
    until [[ -e $work/stop ]]; do
        local now=$EPOCHREALTIME
        tm capture-pane -e -p -t rec >"$work/frames/$n.ans" 2>/dev/null || break
        echo "$now $n.ans" >>"$work/frames/index"
        n=$((n + 1))
        sleep 0.25
    done
}
poll &
poller=$!

# The brief at the top waits for a person: select it (g: briefs sort to the top), review it
# (c), confirm (y), as the status line says.
confirm_top() {
    key g
    sleep 1.2
    key c
    wait_until has_line "Confirm the delegation brief"
    sleep 3
    key y
    sleep 1
}

# Two cycles wait for a person: add-multiplication, and the one the scripted chat client
# started through forgeloop serve (calc-…, named by serve). Confirm the first; then the
# connector screen (S): serve, the chat client's grant, its calls as they come (its cycle
# tests its PR as soon as its brief is confirmed); back (Esc); confirm the other.
wait_until has_line "◆ CONFIRM BRIEF" "add-multiplication"
wait_until has_line "◆ CONFIRM BRIEF" "calc-"
sleep 2 # meanwhile the other cycles get going
confirm_top
key S
sleep 5
key Escape
sleep 0.5
confirm_top
# Its conversation (2) fills in as its PR is made and tested (the connector cycle's stays
# empty: no relay).
key 2
sleep 5

# The cycle whose setup was refused the team's package index waits for a person (NEEDS NET,
# right after briefs): select it (g), ask what would be allowed (A): the index is on 127.0.0.1,
# not public, so no key allows it; the person writes the exact entry into the sandbox's
# config.toml by hand, and the cycle runs again.
wait_until has_line "⚠ NEEDS NET" "add-average-with-deps"
key g
sleep 1.2
key 3 # its Runs tab: the refused host
sleep 2.5
key A
wait_until has_line "is not public: no key allows it"
entry=$(screen | grep -o '127\.0\.0\.1:[0-9]*' | head -n 1)
sleep 3
printf '\n[network.repositories."forgeloop-demo/calc"]\nallow = ["%s"]\n' "$entry" >>"$sandbox/config.toml"
sleep 2

# add-subtraction, whose first PR failed: filter to it (/…, Enter), open it (Enter), its
# conversation scrolled down (2, j…), its runs (3), the failed run's log (j, 4), the diff (5)
# and what the fix changed since the failed run (s).
wait_until has_line "✓ READY" "add-subtraction"
key /
sleep 0.3
type_text add-subtraction
sleep 0.8
key Enter
sleep 0.8
key Enter
sleep 0.6
key 2
sleep 2
for _ in 1 2 3 4 5 6 7 8; do
    key j
    sleep 0.15
done
sleep 2
key 3
sleep 1.5
key j
sleep 1
key 4
sleep 3
key 5
sleep 2.5
key s
sleep 3

# Back to the whole list (Esc: to the list, Esc: clear the filter).
key Escape
sleep 0.5
key Escape
sleep 0.5

# The two reviews wait for the person: filter to one, its Review tab (8); the packet's yes (P,
# then y) where one waits; then each finding: FIX the first (F), dismiss the second (j, I).
decide() {
    local tries
    for tries in 1 2 3 4 5; do
        key "$1"
        sleep 1.5
        has_line "#$3 " "$2" && return 0
    done
    echo "finding $3 was not decided $2" >&2
    screen >&2
    return 1
}
answer_review() {
    key /
    sleep 0.3
    type_text "$1"
    sleep 0.5
    key Enter
    sleep 0.5
    key Enter
    sleep 0.5
    key 8
    sleep 2
    if [[ $2 == packet ]]; then
        wait_until has_line "needs your yes"
        key P
        sleep 1.5
        key y
        sleep 1
    fi
    wait_until has_line "untriaged"
    sleep 1.5
    # A key pressed while the tab reloads the cycle can be lost: press again until it shows.
    decide F "FIX" 1
    key j
    sleep 0.6
    decide I "DISMISS" 2
    key Escape
    sleep 0.5
    key Escape
    sleep 0.5
}
wait_until has_line "◆ TRIAGE" "review-with-connector"
answer_review review-with-connector connector
wait_until has_line "review-with-packet" "PACKET"
answer_review review-with-packet packet
wait_until all_ended
sleep 3

touch "$work/stop"
wait "$poller"
poller=
key q # the demo stops its cycles, removes its sandbox and prints its JSON summary
pane_dead() { [[ $(tm display-message -p -t rec '#{pane_dead}') == 1 ]]; }
wait_until pane_dead
status=$(cat "$work/status")
[[ $status == 0 ]] || { echo "forgeloop demo exited with $status" >&2; screen >&2; exit 1; }

# The picture starts once the brief waiting for a person shows: before it come a blank terminal,
# an empty list and the first cycles arriving, a poor still image for viewers that do not
# animate SVG. (The cast keeps everything.)
index="$work/frames/index"
while read -r _ first < <(head -n 1 "$index") && ! grep -q "CONFIRM BRIEF" "$work/frames/$first"; do
    sed -i 1d "$index"
done

mkdir -p "$OUT"
python3 scripts/script_to_cast.py --log "$work/out.log" --timing "$work/timing.log" \
    --width "$COLS" --height "$ROWS" --timestamp "$started" --max-gap 1.5 \
    --title "forgeloop demo --speed $SPEED" --out "$OUT/demo.cast"
python3 scripts/frames_to_svg.py --index "$work/frames/index" --width "$COLS" --height "$ROWS" \
    --max-frames 80 --max-gap 2.5 --end-hold 4 \
    --title "forgeloop demo: ten cycles of the WebGPT pull-request loop in the control room" \
    --out "$OUT/demo.svg"
ls -l "$OUT/demo.cast" "$OUT/demo.svg"
