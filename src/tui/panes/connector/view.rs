//! Connector view: `forgeloop serve`'s address and pairing code, the grants, the last calls.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, Wrap};

use crate::domain::connector::CallRecord;
use crate::tui::panes::Draw;
use crate::tui::sanitize::clean;
use crate::tui::widgets::{pane_block, short_time};

/// Draws the Connector screen.
pub fn render(pane: &super::ConnectorPane, d: &Draw, frame: &mut Frame, area: Rect) {
    let theme = d.theme;
    let block = pane_block(theme, true).title(Span::styled(" Connector (forgeloop serve) ", theme.title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(overview) = &pane.overview else {
        frame.render_widget(Paragraph::new(Span::styled("Loading…", theme.muted)), inner);
        return;
    };
    let mut head: Vec<Line> = Vec::new();
    match &overview.serving {
        Some(serving) => {
            head.push(Line::from(vec![
                Span::styled("⇄ serving ", theme.ok),
                Span::styled(serving.mcp_url.clone(), theme.accent),
                Span::styled(
                    format!("  (listening on {}, since {})", serving.url, short_time(&serving.started_at)),
                    theme.muted,
                ),
            ]));
            let code = serving.pairing_code.clone().unwrap_or_else(|| "none".into());
            let until = serving.pairing_expires_at.as_deref().map(short_time).unwrap_or_default();
            head.push(Line::from(vec![
                Span::styled("Pairing code ", theme.text),
                Span::styled(code, theme.attention),
                Span::styled(
                    format!("  until {until}, used once: type it on the client's authorization page"),
                    theme.muted,
                ),
            ]));
        }
        None => {
            head.push(Line::from(Span::styled("forgeloop serve is not running.", theme.muted)));
            head.push(Line::from(Span::styled(
                "Start it with `forgeloop serve --public-url https://YOUR-TUNNEL` (see docs/connector.md).",
                theme.muted,
            )));
        }
    }
    if let Some(error) = &overview.error {
        head.push(Line::from(Span::styled(error.clone(), theme.error)));
    }
    let grants_height = (overview.grants.len() as u16 + 1).clamp(2, 10);
    let [top, grants_area, calls_area] = Layout::vertical([
        Constraint::Length(head.len() as u16 + 1),
        Constraint::Length(grants_height + 1),
        Constraint::Min(1),
    ])
    .areas(inner);
    frame.render_widget(Paragraph::new(head).wrap(Wrap { trim: false }), top);

    let rows: Vec<Row> = overview
        .grants
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let state = match &g.revoked {
                Some(r) => format!("revoked {} ({})", short_time(&r.at), r.reason),
                None if g.live_access_tokens > 0 => "live".to_owned(),
                None => "allowed (no live token)".to_owned(),
            };
            // A name is the client's own claim: two grants under one name deserve a look.
            let namesake = overview
                .grants
                .iter()
                .any(|o| o.grant != g.grant && o.client == g.client && o.revoked.is_none() && g.revoked.is_none());
            let mut client = clean(&d.redactor.redact(&g.client));
            if namesake {
                client.push_str(" ⚠ same name");
            }
            let row = Row::new(vec![
                Cell::from(g.grant.clone()),
                Cell::from(client),
                Cell::from(clean(&g.redirect_hosts.join(", "))),
                Cell::from(short_time(&g.created_at)),
                Cell::from(g.cycles.len().to_string()),
                Cell::from(state),
            ]);
            if i == pane.selected { row.style(theme.selection) } else { row.style(theme.text) }
        })
        .collect();
    if rows.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled("No grants: no client was allowed yet.", theme.muted)),
            grants_area,
        );
    } else {
        let table = Table::new(
            rows,
            [
                Constraint::Length(16),
                Constraint::Min(12),
                Constraint::Min(14),
                Constraint::Length(17),
                Constraint::Length(7),
                Constraint::Min(10),
            ],
        )
        .header(Row::new(vec!["Grant", "Client", "Goes to", "Allowed", "Cycles", "State"]).style(theme.header));
        frame.render_widget(table, grants_area);
    }

    let mut calls: Vec<Line> = vec![Line::from(Span::styled("Last calls", theme.header))];
    let room = usize::from(calls_area.height.saturating_sub(1));
    // A `tools/call` request is journaled twice, as the request and as the tool it named: the
    // tool's line says more (which tool, ok or refused), so the bare request is not shown.
    let shown: Vec<&CallRecord> = overview
        .calls
        .iter()
        .filter(|call| !matches!(call, CallRecord::Request { method: Some(m), .. } if m == "tools/call"))
        .collect();
    let start = shown.len().saturating_sub(room);
    for call in &shown[start..] {
        let (at, client, what) = match call {
            CallRecord::Tool { at, client, tool, ok, .. } => {
                (at, client, format!("{tool} {}", if *ok { "ok" } else { "refused" }))
            }
            CallRecord::Request { at, client, method, http, .. } => {
                (at, client, method.clone().unwrap_or_else(|| http.clone()))
            }
        };
        let line = format!("{}  {client}  {what}", short_time(at));
        // The method name is the client's own text: no control sequence reaches the terminal.
        let line = clean(&d.redactor.redact(&line));
        calls.push(Line::from(Span::styled(line, theme.text)));
    }
    if overview.calls.is_empty() {
        calls.push(Line::from(Span::styled("none yet", theme.muted)));
    }
    frame.render_widget(Paragraph::new(calls), calls_area);
}
