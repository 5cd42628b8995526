//! The committed recording of `forgeloop demo` (docs/media/demo.cast and demo.svg, made by
//! scripts/record-demo.sh) is whole and well-formed, without re-recording it: the cast is an
//! asciicast v2 file of the script's terminal size that shows every cycle, and the SVG animates
//! exactly the frames it draws.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "docs_support/files.rs"]
mod files;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The terminal size scripts/record-demo.sh records at (COLS, ROWS there).
const WIDTH: u64 = 120;
const HEIGHT: u64 = 34;
/// What the recording must show of each cycle: the relay loop's by name; the connector's (named
/// by `forgeloop serve`) by its driver's client, and the connector screen's calls.
const CYCLES: [&str; 10] = [
    "add-subtraction",
    "add-power",
    "add-multiplication",
    "add-division",
    "add-modulo",
    "add-maximum-on-ci",
    "add-average-with-deps",
    "connector:demo-chat",
    "Pairing code",
    "test_pr",
];
const REMAKE: &str = "run scripts/record-demo.sh to make it again";

fn media(name: &str) -> (PathBuf, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/media").join(name);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}; {REMAKE}", path.display()));
    (path, text)
}

#[test]
fn the_cast_is_asciicast_v2_of_the_whole_demo() {
    let (path, cast) = media("demo.cast");
    let mut lines = cast.lines();
    let header: Value = serde_json::from_str(lines.next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{}: the first line is not a JSON header ({e}); {REMAKE}", path.display()));
    assert_eq!(header["version"], 2, "{}: not asciicast v2: {header}", path.display());
    assert_eq!(header["width"], WIDTH, "{}: width; {REMAKE}", path.display());
    assert_eq!(header["height"], HEIGHT, "{}: height; {REMAKE}", path.display());
    assert!(header["timestamp"].is_u64(), "{}: timestamp: {header}", path.display());
    assert!(header["env"]["TERM"].is_string(), "{}: env.TERM: {header}", path.display());

    let mut last = 0.0_f64;
    let mut output = String::new();
    let mut events = 0;
    for (n, line) in lines.enumerate() {
        let number = n + 2;
        let event: Value = serde_json::from_str(line).unwrap_or_else(|e| {
            panic!("{}:{number}: not JSON ({e}), the file is damaged or truncated; {REMAKE}", path.display())
        });
        let fields = event.as_array().filter(|a| a.len() == 3);
        let (Some(time), Some("o"), Some(data)) = (
            fields.and_then(|a| a[0].as_f64()),
            fields.and_then(|a| a[1].as_str()),
            fields.and_then(|a| a[2].as_str()),
        ) else {
            panic!("{}:{number}: not a [time, \"o\", text] event: {line}", path.display());
        };
        assert!(time >= last, "{}:{number}: time goes back from {last} to {time}", path.display());
        last = time;
        output.push_str(data);
        events += 1;
    }
    assert!(events >= 50, "{}: only {events} events; {REMAKE}", path.display());
    assert!(last < 90.0, "{}: lasts {last:.1} s (the script keeps it under a minute)", path.display());
    assert!(last > 10.0, "{}: lasts only {last:.1} s, the demo cannot have ended; {REMAKE}", path.display());

    let screen = files::plain_text(&output);
    for needle in CYCLES.iter().chain(&["READY", "Confirm the delegation brief"]) {
        assert!(screen.contains(needle), "{}: the recording never shows {needle:?}; {REMAKE}", path.display());
    }
}

#[test]
fn the_svg_animates_every_frame_it_draws() {
    let (path, svg) = media("demo.svg");
    assert!(svg.starts_with("<svg"), "{}: does not start with <svg; {REMAKE}", path.display());
    assert!(svg.trim_end().ends_with("</svg>"), "{}: truncated (no closing </svg>); {REMAKE}", path.display());
    assert!(svg.len() < 2 << 20, "{}: {} bytes, over 2 MB for a README image", path.display(), svg.len());
    assert_eq!(svg.matches("<g").count(), svg.matches("</g>").count(), "{}: unbalanced <g>", path.display());
    assert!(svg.contains("add-multiplication"), "{}: no add-multiplication on any frame", path.display());

    // Frame i sits i screens down the strip; the keyframes move the strip up one screen per
    // frame, so they must name exactly the offsets 0, 1, …, frames-1 screens.
    let frames = svg.matches(r#"class="f""#).count();
    assert!(frames >= 10, "{}: {frames} frames, not an animation; {REMAKE}", path.display());
    let declared = format!(r#"data-frames="{frames}""#);
    assert!(svg.contains(&declared), "{}: draws {frames} frames but does not declare {declared}", path.display());
    let keyframes = svg
        .split_once("@keyframes play{")
        .and_then(|(_, rest)| rest.split_once("}}"))
        .map(|(body, _)| body)
        .unwrap_or_else(|| panic!("{}: no @keyframes play; {REMAKE}", path.display()));
    let mut offsets: Vec<u64> = keyframes
        .split("translateY(")
        .skip(1)
        .map(|s| s.split("px").next().unwrap().trim_start_matches('-').parse().unwrap())
        .collect();
    offsets.dedup();
    let screen = HEIGHT * 12; // rows × the SVG's row height
    let wanted: Vec<u64> = (0..frames as u64).map(|i| i * screen).collect();
    assert_eq!(offsets, wanted, "{}: the keyframes do not step through the {frames} frames", path.display());
}
