//! One description per MCP parameter: the tables in docs/configuration.md and in the runbook
//! (skills/webgpt-orchestrator/SKILL.md) are made from what `forgeloop mcp` answers to
//! `tools/list`, so a parameter added, renamed or described anew without the docs following
//! fails here. `UPDATE_DOCS=1` rewrites both tables.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

#[path = "docs_support/files.rs"]
mod files;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const BEGIN: &str = "<!-- mcp-parameters:begin (generated from `forgeloop mcp`'s tools/list; UPDATE_DOCS=1 cargo test --test mcp_params_doc) -->";
const END: &str = "<!-- mcp-parameters:end -->";

/// The tools `forgeloop mcp` lists, asked over its own stdio as a client asks.
fn listed_tools() -> Vec<Value> {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), "").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_forgeloop"))
        .arg("mcp")
        .env("FORGELOOP_HOME", home.path())
        .env("FORGELOOP_CONFIG", home.path().join("config.toml"))
        .env_remove("GH_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "docs", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let tools = loop {
        let line = lines.next().expect("the server closed stdout before answering tools/list").unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == json!(2) {
            break message["result"]["tools"].as_array().cloned().unwrap();
        }
    };
    drop(stdin);
    let _ = child.wait();
    tools
}

/// One row per parameter, tools by name, parameters in the schema's order; a required one is
/// marked. A `|` in a description is escaped so the table keeps its columns.
fn rendered(tools: &[Value]) -> String {
    let mut tools: Vec<&Value> = tools.iter().collect();
    tools.sort_by_key(|t| t["name"].as_str().unwrap_or_default().to_owned());
    let mut out = String::from("\n| Tool | Parameter | What to pass |\n|---|---|---|\n");
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        let schema = &tool["inputSchema"];
        let required: Vec<&str> =
            schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let properties = schema["properties"].as_object().cloned().unwrap_or_default();
        if properties.is_empty() {
            out.push_str(&format!("| `{name}` | — | |\n"));
        }
        for (parameter, property) in &properties {
            let description = property["description"]
                .as_str()
                .unwrap_or_else(|| panic!("{name}'s parameter {parameter} has no description"));
            let mark = if required.contains(&parameter.as_str()) { " (required)" } else { "" };
            assert!(!description.contains('<'), "{name}'s {parameter}: a <placeholder> vanishes in rendered Markdown");
            out.push_str(&format!("| `{name}` | `{parameter}`{mark} | {} |\n", description.replace('|', "\\|")));
        }
    }
    out.push('\n');
    out
}

/// A parameter that means the same thing in several tools is described once: the same words.
/// (Names whose meaning differs by tool are listed: a new cycle's `state`, a profile that is
/// optional after a cycle's first run, a cycle's PR, an override's reason and PR.)
#[test]
fn a_parameter_has_one_description_across_tools() {
    let differs = [
        ("forge_start", "state"),
        ("forge_review_start", "state"),
        ("forge_test", "profile"),
        ("forge_test", "pr"),
        ("forge_reply", "reason"),
        ("forge_reply", "pr"),
    ];
    let mut seen: std::collections::BTreeMap<String, (String, String)> = Default::default();
    for tool in listed_tools() {
        let name = tool["name"].as_str().unwrap().to_owned();
        for (parameter, property) in tool["inputSchema"]["properties"].as_object().cloned().unwrap_or_default() {
            if differs.contains(&(name.as_str(), parameter.as_str())) {
                continue;
            }
            let description = property["description"].as_str().unwrap_or_default().to_owned();
            if let Some((first, said)) = seen.get(&parameter) {
                assert_eq!(said, &description, "{parameter} is described one way in {first} and another in {name}");
            } else {
                seen.insert(parameter, (name.clone(), description));
            }
        }
    }
}

#[test]
fn the_docs_parameter_tables_are_the_tool_list() {
    let tools = listed_tools();
    assert!(tools.len() >= 16, "tools/list answered {} tools", tools.len());
    let table = rendered(&tools);
    files::check_generated("docs/configuration.md", BEGIN, END, &table, "mcp_params_doc");
    files::check_generated("skills/webgpt-orchestrator/SKILL.md", BEGIN, END, &table, "mcp_params_doc");
}
