#!/usr/bin/env python3
"""How much of a public secret-scanning rule table forgeloop's redactor covers.

Reads a gitleaks-style TOML rule file (not part of this repository: pass its path), generates
samples from each rule's regex (`rstr.xeger`), runs them through `forgeloop redact`, and
reports per rule whether every sample's secret (the rule's `secretGroup`, else group 1, else
the whole match) is gone from the output. Needs `pip install rstr` (Python 3.11+ for tomllib).

    scripts/redact-coverage.py --rules gitleaks.toml [--bin target/debug/forgeloop]
        [--samples 3] [--only ID,ID] [--show-leaks]
"""

import argparse
import random
import re
import subprocess
import sys
import tomllib

import rstr

SKIP = {"generic-api-key", "pkcs12-file"}


POSIX_CLASSES = {
    "[:alnum:]": "a-zA-Z0-9",
    "[:alpha:]": "a-zA-Z",
    "[:digit:]": "0-9",
    "[:lower:]": "a-z",
    "[:upper:]": "A-Z",
    "[:xdigit:]": "0-9a-fA-F",
    "[:space:]": r" \t\r\n\f\v",
}


def go_to_python(pattern):
    # RE2's (?i) inside a group, \z and POSIX classes (`[[:alnum:]]`) are spelled differently
    # in Python (which reads `[[:alnum:]]` as a set of `[:alnum` followed by `]`).
    for posix, plain in POSIX_CLASSES.items():
        pattern = pattern.replace(posix, plain)
    return pattern.replace(r"\z", r"\Z").replace("(?-i:", "(?:")


def samples_for(rule, count, rng):
    rx = go_to_python(rule["regex"])
    try:
        compiled = re.compile(rx)
    except re.error:
        return None
    group = rule.get("secretGroup", 1 if compiled.groups else 0)
    out = []
    for _ in range(count * 20):
        if len(out) >= count:
            break
        try:
            text = rstr.xeger(rx)
        except Exception:
            return None
        if "\n" in text.strip("\n") or not text.strip():
            continue
        m = compiled.search(text)
        if not m:
            continue
        secret = m.group(group) if group <= compiled.groups else m.group(0)
        if secret and len(secret) >= 6:
            out.append((text.strip("\n"), secret))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", required=True)
    ap.add_argument("--bin", default="target/debug/forgeloop")
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--show-leaks", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    random.seed(args.seed)
    rstr_rng = rstr.Rstr(random.Random(args.seed))
    rstr.xeger = rstr_rng.xeger
    with open(args.rules, "rb") as f:
        rules = tomllib.load(f)["rules"]
    only = set(filter(None, args.only.split(",")))
    results = []
    for rule in rules:
        if rule["id"] in SKIP or "regex" not in rule or (only and rule["id"] not in only):
            continue
        samples = samples_for(rule, args.samples, random)
        if not samples:
            continue
        text = "\n\n".join(t for t, _ in samples) + "\n"
        red = subprocess.run([args.bin, "redact"], input=text.encode(), capture_output=True).stdout.decode()
        leaked = [(t, s) for t, s in samples if s in red]
        results.append((rule["id"], len(samples), leaked))
    full = sum(1 for _, _, leaked in results if not leaked)
    total_samples = sum(n for _, n, _ in results)
    leaked_samples = sum(len(leaked) for _, _, leaked in results)
    for rid, n, leaked in results:
        if leaked:
            print(f"LEAK {rid}: {len(leaked)}/{n}")
            if args.show_leaks:
                for t, s in leaked:
                    print(f"    {t!r}")
    print(f"formats fully masked: {full}/{len(results)} ({100.0 * full / max(1, len(results)):.1f}%); "
          f"samples leaked: {leaked_samples}/{total_samples}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
