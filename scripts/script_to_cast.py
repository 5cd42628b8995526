#!/usr/bin/env python3
"""Turns a util-linux `script` recording into an asciicast v2 file.

`script --log-out OUT --log-timing TIMING` writes every byte the program sent to its pty to
OUT and, in TIMING, one "DELAY BYTES" line per chunk (classic format: DELAY is the seconds
since the previous chunk). Each chunk becomes one `[time, "o", text]` event; delays longer
than --max-gap are cut to it, so idle stretches play briskly.

    scripts/script_to_cast.py --log OUT --timing TIMING --width 120 --height 34 \
        --title "forgeloop demo" --out docs/media/demo.cast

Python 3 standard library only.
"""

import argparse
import codecs
import json
import sys
import time


def read_chunks(log_path, timing_path):
    """Yields (delay, bytes) per chunk of the recording."""
    with open(log_path, "rb") as f:
        data = f.read()
    # `script` puts a "Script started on …" line before the program's bytes (and a "Script
    # done" line after them, which the timing file never reaches).
    if data.startswith(b"Script started on "):
        data = data[data.index(b"\n") + 1 :]
    offset = 0
    with open(timing_path, encoding="ascii") as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 2:
                sys.exit(f"{timing_path}:{number}: expected 'DELAY BYTES' (classic format), got {line!r}")
            delay, size = float(fields[0]), int(fields[1])
            chunk = data[offset : offset + size]
            if len(chunk) != size:
                sys.exit(f"{timing_path}:{number}: the log ends {size - len(chunk)} bytes early")
            offset += size
            yield delay, chunk


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", required=True, help="script's --log-out file")
    parser.add_argument("--timing", required=True, help="script's --log-timing file")
    parser.add_argument("--width", type=int, required=True)
    parser.add_argument("--height", type=int, required=True)
    parser.add_argument("--title", default="")
    parser.add_argument("--term", default="xterm-256color", help="the TERM the program ran with")
    parser.add_argument("--timestamp", type=int, default=None, help="Unix time of the start (default: now)")
    parser.add_argument("--max-gap", type=float, default=1.5, help="longest pause kept, in seconds")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    header = {
        "version": 2,
        "width": args.width,
        "height": args.height,
        "timestamp": args.timestamp if args.timestamp is not None else int(time.time()),
        "title": args.title,
        "env": {"TERM": args.term},
    }
    # A multi-byte character may be split between two chunks: decode incrementally.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    clock = 0.0
    events = 0
    with open(args.out, "w", encoding="utf-8", newline="\n") as out:
        out.write(json.dumps(header, ensure_ascii=False) + "\n")
        for delay, chunk in read_chunks(args.log, args.timing):
            clock += min(max(delay, 0.0), args.max_gap)
            text = decoder.decode(chunk)
            if text:
                out.write(json.dumps([round(clock, 6), "o", text], ensure_ascii=False) + "\n")
                events += 1
        rest = decoder.decode(b"", final=True)
        if rest:
            out.write(json.dumps([round(clock, 6), "o", rest], ensure_ascii=False) + "\n")
            events += 1
    print(f"{args.out}: {events} events, {clock:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
