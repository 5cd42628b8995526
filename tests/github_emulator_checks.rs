//! The emulator's check-run list as the `github-checks` executor will poll it (design §5.7):
//! `check_name` and `filter`, an `ETag` answered by `304 Not Modified`, and rate-limit headers
//! that count every answer but a 304. Real HTTP on 127.0.0.1.

mod github_support;

use std::collections::HashMap;

use github_emulator::CheckRun;
use github_support::setup;
use serde_json::Value;

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

struct Answer {
    status: u16,
    headers: HashMap<String, String>,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    fn header(&self, name: &str) -> &str {
        self.headers.get(name).map(String::as_str).unwrap_or_else(|| panic!("no {name}: {:?}", self.headers))
    }
}

/// A GET with the token and any extra header lines; the whole answer, headers included.
async fn get(port: u16, token: &str, path: &str, extra: &[String]) -> Answer {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let extra: String = extra.iter().map(|h| format!("{h}\r\n")).collect();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n{extra}Connection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8(response).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    Answer { status, headers, body: body.to_owned() }
}

fn names(answer: &Answer) -> Vec<(String, String)> {
    answer.json()["check_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| (run["name"].as_str().unwrap().to_owned(), run["conclusion"].as_str().unwrap_or("").to_owned()))
        .collect()
}

#[tokio::test]
async fn check_runs_filter_by_name_and_keep_the_latest_rerun_unless_asked_for_all() {
    let s = setup().await;
    s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let port = s.emulator.addr().port();
    let runs = vec![
        CheckRun::completed("unit tests", "failure"),
        CheckRun::completed("lint", "success"),
        CheckRun::completed("unit tests", "success"),
    ];
    s.emulator.set_check_runs(SHA, runs).unwrap();
    let base = format!("/repos/acme/widget/commits/{SHA}/check-runs");
    let pair = |name: &str, word: &str| (name.to_owned(), word.to_owned());

    let latest = get(port, &s.token, &base, &[]).await;
    assert_eq!(latest.status, 200, "{}", latest.body);
    assert_eq!(names(&latest), [pair("lint", "success"), pair("unit tests", "success")]);
    assert_eq!(latest.json()["total_count"], 2);
    let all = get(port, &s.token, &format!("{base}?filter=all"), &[]).await;
    assert_eq!(names(&all), [pair("unit tests", "failure"), pair("lint", "success"), pair("unit tests", "success")]);
    let one = get(port, &s.token, &format!("{base}?check_name=unit+tests&filter=all"), &[]).await;
    assert_eq!(names(&one), [pair("unit tests", "failure"), pair("unit tests", "success")]);
    let encoded = get(port, &s.token, &format!("{base}?check_name=unit%20tests"), &[]).await;
    assert_eq!(names(&encoded), [pair("unit tests", "success")]);
    let none = get(port, &s.token, &format!("{base}?check_name=docs"), &[]).await;
    assert_eq!((none.json()["total_count"].as_u64(), names(&none).len()), (Some(0), 0));
}

#[tokio::test]
async fn an_unchanged_list_is_a_free_304_and_every_other_answer_counts() {
    let s = setup().await;
    s.emulator.create_repo("acme", "widget", false).await.unwrap();
    let port = s.emulator.addr().port();
    s.emulator
        .set_check_runs(SHA, vec![CheckRun { name: "ci".into(), status: "queued".into(), conclusion: None }])
        .unwrap();
    let path = format!("/repos/acme/widget/commits/{SHA}/check-runs");
    let used = |a: &Answer| -> (u64, u64) {
        (a.header("x-ratelimit-used").parse().unwrap(), a.header("x-ratelimit-remaining").parse().unwrap())
    };

    let first = get(port, &s.token, &path, &[]).await;
    assert_eq!(first.status, 200);
    assert_eq!(first.header("x-ratelimit-limit"), "5000");
    assert!(first.header("x-ratelimit-reset").parse::<i64>().is_ok());
    let (used_first, remaining_first) = used(&first);
    assert_eq!(used_first + remaining_first, 5000);
    let etag = first.header("etag").to_owned();
    assert!(etag.starts_with("W/\""), "{etag}");

    let cached = get(port, &s.token, &path, &[format!("If-None-Match: {etag}")]).await;
    assert_eq!(cached.status, 304);
    assert!(cached.body.is_empty(), "a 304 has no body: {:?}", cached.body);
    assert_eq!(cached.header("etag"), etag);
    assert_eq!(used(&cached), (used_first, remaining_first), "a 304 costs nothing");

    let other_tag = get(port, &s.token, &path, &["If-None-Match: W/\"0000\"".to_owned()]).await;
    assert_eq!(other_tag.status, 200);
    assert_eq!(used(&other_tag), (used_first + 1, remaining_first - 1));

    // A change makes a new body, a new tag, and a 200 again for the old one.
    s.emulator.set_check_runs(SHA, vec![CheckRun::completed("ci", "success")]).unwrap();
    let changed = get(port, &s.token, &path, &[format!("If-None-Match: {etag}")]).await;
    assert_eq!(changed.status, 200);
    assert_ne!(changed.header("etag"), etag);
    assert_eq!(names(&changed), [("ci".to_owned(), "success".to_owned())]);
    assert_eq!(used(&changed), (used_first + 2, remaining_first - 2));

    // Other API answers carry the counted headers too.
    let repo = get(port, &s.token, "/repos/acme/widget", &[]).await;
    assert_eq!(repo.status, 200);
    assert_eq!(used(&repo), (used_first + 3, remaining_first - 3));
    let limits = get(port, &s.token, "/rate_limit", &[]).await;
    assert_eq!(limits.json()["rate"]["used"], used_first + 3, "the count before this request");
    assert_eq!(used(&limits), (used_first + 4, remaining_first - 4));
}
