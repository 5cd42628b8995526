//! Fenced code blocks of a Markdown file, found by CommonMark's rules as far as the docs use
//! them: both the doc-example test and the link checker need to know what is code and what
//! is prose. Pure text in, pure data out.
#![allow(dead_code)]

/// One fenced code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// 1-based line of the opening fence.
    pub line: usize,
    /// The info string, trimmed (`sh`, `json file=commands.json`, or empty).
    pub info: String,
    /// The content lines (1-based line number, text without the fence's indentation).
    pub body: Vec<(usize, String)>,
    /// Whether a closing fence was found (an unclosed block runs to the end of the file).
    pub closed: bool,
}

/// A Markdown file cut into prose lines and fenced blocks, in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A line outside every fenced block (1-based line number, text).
    Text(usize, String),
    Block(Fence),
}

/// An opening fence: indentation, marker character, marker length, info string.
fn opening(line: &str) -> Option<(usize, char, usize, String)> {
    let rest = line.trim_start_matches(' ');
    let indent = line.len() - rest.len();
    let marker = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let count = rest.chars().take_while(|c| *c == marker).count();
    if count < 3 {
        return None;
    }
    let info = rest[count..].trim();
    // A backtick fence's info string may not hold a backtick (```` ```x``` ```` is inline code).
    if marker == '`' && info.contains('`') {
        return None;
    }
    Some((indent, marker, count, info.to_owned()))
}

fn closes(line: &str, marker: char, count: usize) -> bool {
    let rest = line.trim_start_matches(' ');
    let run = rest.chars().take_while(|c| *c == marker).count();
    run >= count && rest[run * marker.len_utf8()..].trim().is_empty()
}

/// Splits `text` into prose lines and fenced blocks.
pub fn segments(text: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    while let Some((number, line)) = lines.next() {
        let Some((indent, marker, count, info)) = opening(line) else {
            out.push(Segment::Text(number, line.to_owned()));
            continue;
        };
        let mut fence = Fence { line: number, info, body: Vec::new(), closed: false };
        for (n, l) in lines.by_ref() {
            if closes(l, marker, count) {
                fence.closed = true;
                break;
            }
            // Content loses up to the fence's own indentation (a block inside a list item).
            let strip = l.len() - l.trim_start_matches(' ').len();
            fence.body.push((n, l[strip.min(indent)..].to_owned()));
        }
        out.push(Segment::Block(fence));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(text: &str) -> Vec<Fence> {
        segments(text)
            .into_iter()
            .filter_map(|s| match s {
                Segment::Block(f) => Some(f),
                Segment::Text(..) => None,
            })
            .collect()
    }

    #[test]
    fn fences_of_both_kinds_with_and_without_info() {
        let found = blocks("a\n```sh\necho 1\n```\n~~~\nplain\n~~~\n");
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].line, found[0].info.as_str()), (2, "sh"));
        assert_eq!(found[0].body, vec![(3, "echo 1".to_owned())]);
        assert_eq!((found[1].line, found[1].info.as_str(), found[1].closed), (5, "", true));
    }

    #[test]
    fn a_longer_fence_holds_a_shorter_one_and_inline_code_is_no_fence() {
        let found = blocks("````markdown\n```sh\nls\n```\n````\n```` ```sh file=x ```` is inline\n");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].info, "markdown");
        assert_eq!(found[0].body.len(), 3);
    }

    #[test]
    fn an_indented_fence_in_a_list_item_loses_its_indentation() {
        let found = blocks("* item\n\n  ```yaml\n  on: push\n    deeper: 1\n  ```\n");
        assert_eq!(found[0].body, vec![(4, "on: push".to_owned()), (5, "  deeper: 1".to_owned())]);
        assert!(found[0].closed);
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        let found = blocks("```sh\nls\n");
        assert!(!found[0].closed);
        assert_eq!(found[0].body.len(), 1);
    }
}
