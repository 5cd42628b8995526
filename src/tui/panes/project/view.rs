//! Project tab: the cycle's repository binding, ChatGPT Project and conversation, checked
//! against the registry, and the repository's sources manifest.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::tui::load::project_id;
use crate::tui::model::{CycleEntry, Sources};
use crate::tui::panes::Draw;

use crate::tui::widgets::field;

/// Draws the Project tab of `entry`: its Project and conversation against the registry, and the
/// sources manifest.
pub fn render(pane: &super::ProjectPane, d: &Draw, entry: &CycleEntry, frame: &mut Frame, area: Rect) {
    let theme = d.theme;
    let Some(state) = &entry.state else { return };
    let pad = 16;
    let none = || "—".to_owned();
    let mut lines = vec![
        field(theme, "Repository", pad, state.effective_repository().unwrap_or_else(none), theme.text),
        field(theme, "PR", pad, state.pr_ref.clone().unwrap_or_else(none), theme.text),
        field(theme, "Project", pad, state.project_name.clone().unwrap_or_else(none), theme.text),
        field(theme, "Project URL", pad, state.project_url.clone().unwrap_or_else(none), theme.info),
        field(theme, "Conversation", pad, state.conversation_url.clone().unwrap_or_else(none), theme.info),
        field(theme, "Task space", pad, state.task_space.clone(), theme.muted),
        field(theme, "State file", pad, d.shown(&entry.path), theme.muted),
        Line::from(""),
    ];
    match &state.repository {
        None => lines.push(Line::from(Span::styled(
            "Not bound to a repository yet (the first accepted PR binds it).",
            theme.muted,
        ))),
        Some(repo) => {
            let key = repo.to_ascii_lowercase();
            match d.registry.records.iter().find(|p| p.key == key) {
                None if !d.registry.read => lines.push(Line::from(Span::styled("Reading the registry…", theme.muted))),
                None => lines.push(field(theme, "Registry", pad, format!("no record for {key}"), theme.muted)),
                Some(record) if record.error.is_some() => lines.push(field(
                    theme,
                    "Registry",
                    pad,
                    format!("invalid record: {}", record.error.clone().unwrap_or_default()),
                    theme.error,
                )),
                Some(record) => {
                    let registry_id = record.project_url.as_deref().and_then(project_id);
                    let state_id = state.project_url.as_deref().and_then(project_id);
                    let conversation_id = state.conversation_url.as_deref().and_then(project_id);
                    let conflict = match (registry_id, state_id, conversation_id) {
                        (Some(r), Some(s), _) if r != s => {
                            Some(format!("the cycle names Project {s}, the registry {r}"))
                        }
                        (Some(r), _, Some(c)) if r != c => {
                            Some(format!("the conversation is in Project {c}, the registry says {r}"))
                        }
                        _ => None,
                    };
                    match conflict {
                        Some(why) => lines.push(field(theme, "Registry", pad, format!("CONFLICT: {why}"), theme.error)),
                        None => lines.push(field(
                            theme,
                            "Registry",
                            pad,
                            format!(
                                "✓ bound to {} ({})",
                                record.project_name.clone().unwrap_or_default(),
                                record.project_url.clone().unwrap_or_default()
                            ),
                            theme.ok,
                        )),
                    }
                }
            }
            lines.push(Line::from(""));
            lines.push(Line::from(Span::styled("Sources", theme.header)));
            match d.registry.sources.get(repo) {
                None => lines.push(Line::from(Span::styled("  reading…", theme.muted))),
                Some(Sources::Missing) => {
                    lines.push(Line::from(Span::styled("  no sources.json for this repository", theme.muted)))
                }
                Some(Sources::Invalid(e)) => {
                    lines.push(Line::from(Span::styled(format!("  sources.json is invalid: {e}"), theme.error)))
                }
                Some(Sources::Items(items)) if items.is_empty() => {
                    lines.push(Line::from(Span::styled("  (empty)", theme.muted)))
                }
                Some(Sources::Items(items)) => {
                    for item in items {
                        let style = match item.status.as_str() {
                            "verified" => theme.ok,
                            "failed" => theme.error,
                            "pending" => theme.warn,
                            _ => theme.muted,
                        };
                        lines.push(Line::from(vec![
                            Span::styled(format!("  {:<10} ", item.status), style),
                            Span::styled(item.what.clone(), theme.text),
                            Span::styled(
                                format!(
                                    "  {}{}{}",
                                    item.purpose,
                                    if item.label.is_empty() { String::new() } else { format!(" · {}", item.label) },
                                    if item.verified.is_empty() {
                                        String::new()
                                    } else {
                                        format!(" · verified {}", item.verified)
                                    }
                                ),
                                theme.muted,
                            ),
                        ]));
                    }
                }
            }
        }
    }
    frame.render_widget(pane.text.scrolled(Paragraph::new(lines).wrap(Wrap { trim: false }), area), area);
}
