//! Themes: semantic roles (ok, warn, error, attention, selection, …) mapped to styles. The
//! three built-in themes are TOML files embedded in the binary; a user theme names a base and
//! overrides only the roles it lists. `NO_COLOR` drops every colour but keeps modifiers, so
//! selection and matches stay visible and status still reads from glyph and word.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};
use toml::Value;

/// The `dark` theme (the default), as embedded from `themes/dark.toml`.
pub const DARK: &str = include_str!("../../themes/dark.toml");
/// The `light` theme, from `themes/light.toml`.
pub const LIGHT: &str = include_str!("../../themes/light.toml");
/// The `high-contrast` theme, from `themes/high-contrast.toml`.
pub const HIGH_CONTRAST: &str = include_str!("../../themes/high-contrast.toml");

/// The built-in themes by the name `--theme` and a user theme's `base` give them.
pub const BUILTIN: [(&str, &str); 3] = [("dark", DARK), ("light", LIGHT), ("high-contrast", HIGH_CONTRAST)];

/// Why the theme asked for cannot be used (the control room does not start).
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    /// `--theme` (or `tui.theme`) names no built-in theme and no readable file.
    #[error(
        "cannot read the theme file {path}: {reason}; pass a built-in name (dark, light, high-contrast) or a readable TOML file"
    )]
    Read {
        /// The file named.
        path: PathBuf,
        /// The OS error, in words.
        reason: String,
    },
    /// The theme is not valid TOML, names an unknown base or role, or has a bad colour.
    #[error("invalid theme {name}: {reason}")]
    Invalid {
        /// The theme's name or file.
        name: String,
        /// What is wrong, naming the role.
        reason: String,
    },
}

macro_rules! roles {
    ($($(#[$doc:meta])* $role:ident),* $(,)?) => {
        /// One style per semantic role.
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        pub struct Theme {
            /// The theme's name: a built-in one's, or a user theme file's stem.
            pub name: String,
            $($(#[$doc])* pub $role: Style,)*
        }

        /// Every role's name, as a theme file spells it.
        pub const ROLES: &[&str] = &[$(stringify!($role)),*];

        impl Theme {
            fn slot(&mut self, role: &str) -> Option<&mut Style> {
                match role {
                    $(stringify!($role) => Some(&mut self.$role),)*
                    _ => None,
                }
            }

            fn map(mut self, f: impl Fn(Style) -> Style) -> Theme {
                $(self.$role = f(self.$role);)*
                self
            }
        }
    };
}

roles!(
    /// Body text.
    text,
    /// Secondary text: hints' labels, ended cycles, placeholders.
    muted,
    /// Emphasis: what is being typed, a toggle that is on.
    accent,
    /// Pane and dialog titles.
    title,
    /// The borders of panes without the keys.
    border,
    /// The border of the pane with the keys.
    border_focus,
    /// The selected row.
    selection,
    /// Table headers and section headings.
    header,
    /// Good news: passed, found, ready to merge.
    ok,
    /// Caution: cycles waiting, a search that wrapped, what cannot be watched.
    warn,
    /// Failures.
    error,
    /// What waits for a person.
    attention,
    /// Links and the agent's side of the conversation.
    info,
    /// What runs now: live runs, the spinner, following.
    running,
    /// The used part of the iteration gauge.
    gauge_filled,
    /// Its unused part.
    gauge_empty,
    /// The gauge of a cycle at its iteration cap.
    gauge_full,
    /// Search matches.
    r#match,
    /// The current search match.
    match_current,
    /// Key names in the footer, dialogs and help.
    key,
    /// The tab shown.
    tab_active,
    /// The other tabs.
    tab_inactive,
    /// Dialog text and background.
    popup,
    /// Dialog borders.
    popup_border,
    /// The status line.
    status_bar,
    /// A toast that reports a failure.
    toast_error,
    /// Any other toast.
    toast_info,
    /// Added lines of a diff.
    diff_add,
    /// Removed lines of a diff.
    diff_remove,
    /// Hunk headers (`@@ … @@`).
    diff_hunk,
    /// File headers (`diff --git`, `---`, `+++`, …).
    diff_meta,
);

fn parse_color(value: &Value, role: &str) -> Result<Color, String> {
    match value {
        Value::String(text) => Color::from_str(text.trim()).map_err(|_| format!("{role}: unknown colour {text:?}")),
        Value::Integer(n) => {
            u8::try_from(*n).map(Color::Indexed).map_err(|_| format!("{role}: colour index {n} is not 0-255"))
        }
        other => Err(format!("{role}: a colour must be a name, \"#rrggbb\" or 0-255, not {}", other.type_str())),
    }
}

fn parse_style(value: &Value, role: &str) -> Result<Style, String> {
    let Value::Table(table) = value else {
        return Ok(Style::new().fg(parse_color(value, role)?));
    };
    let mut style = Style::new();
    for (key, v) in table {
        let flag = |m: Modifier| match v {
            Value::Boolean(true) => Ok(Some(m)),
            Value::Boolean(false) => Ok(None),
            _ => Err(format!("{role}.{key} must be true or false")),
        };
        match key.as_str() {
            "fg" => style = style.fg(parse_color(v, role)?),
            "bg" => style = style.bg(parse_color(v, role)?),
            "bold" => style = flag(Modifier::BOLD)?.map_or(style, |m| style.add_modifier(m)),
            "dim" => style = flag(Modifier::DIM)?.map_or(style, |m| style.add_modifier(m)),
            "italic" => style = flag(Modifier::ITALIC)?.map_or(style, |m| style.add_modifier(m)),
            "underline" => style = flag(Modifier::UNDERLINED)?.map_or(style, |m| style.add_modifier(m)),
            "reversed" => style = flag(Modifier::REVERSED)?.map_or(style, |m| style.add_modifier(m)),
            other => {
                return Err(format!("{role}: unknown key {other:?} (fg, bg, bold, dim, italic, underline, reversed)"));
            }
        }
    }
    Ok(style)
}

impl Theme {
    /// A built-in theme by name.
    pub fn builtin(name: &str) -> Option<Theme> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        Theme::from_toml(Theme { name: name.to_owned(), ..Theme::default() }, name, text).ok()
    }

    /// Applies the roles in `text` over `base`; unknown roles are errors (a typo never
    /// silently does nothing).
    fn from_toml(base: Theme, name: &str, text: &str) -> Result<Theme, ThemeError> {
        let invalid = |reason: String| ThemeError::Invalid { name: name.to_owned(), reason };
        let table: toml::Table = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        let mut theme = base;
        for (key, value) in &table {
            if key == "base" || key == "name" {
                continue;
            }
            let style = parse_style(value, key).map_err(invalid)?;
            let role = if key == "match" { "r#match" } else { key.as_str() };
            let slot = theme.slot(role).ok_or_else(|| {
                invalid(format!("unknown role {key:?}; roles are {}", ROLES.join(", ").replace("r#", "")))
            })?;
            *slot = style;
        }
        Ok(theme)
    }

    /// `--theme NAME|PATH` or config `tui.theme`: a built-in name, else a file whose optional
    /// `base` names the built-in it extends (dark when absent).
    pub fn select(spec: Option<&str>) -> Result<Theme, ThemeError> {
        let spec = spec.map(str::trim).filter(|s| !s.is_empty()).unwrap_or("dark");
        if let Some(theme) = Theme::builtin(spec) {
            return Ok(theme);
        }
        let path = Path::new(spec);
        let text = std::fs::read_to_string(path)
            .map_err(|e| ThemeError::Read { path: path.to_path_buf(), reason: e.to_string() })?;
        let table: toml::Table =
            toml::from_str(&text).map_err(|e| ThemeError::Invalid { name: spec.to_owned(), reason: e.to_string() })?;
        let base_name = table.get("base").and_then(Value::as_str).unwrap_or("dark");
        let base = Theme::builtin(base_name).ok_or_else(|| ThemeError::Invalid {
            name: spec.to_owned(),
            reason: format!("base {base_name:?} is not a built-in theme (dark, light, high-contrast)"),
        })?;
        let mut theme = Theme::from_toml(base, spec, &text)?;
        theme.name = path.file_stem().map_or_else(|| spec.to_owned(), |s| s.to_string_lossy().into_owned());
        Ok(theme)
    }

    /// The theme for text on the selection bar: every role takes the selection's colours, so a
    /// blue `AWAIT PR` or a cyan gauge does not vanish on a cyan bar (glyph and word still say
    /// the status).
    pub fn on_selection(&self) -> Theme {
        let bar = self.selection;
        self.clone().map(|s| s.patch(bar))
    }

    /// The same theme with every colour removed; what must stand out is reversed or bold.
    pub fn without_color(self) -> Theme {
        let mut theme = self.map(|s| Style { fg: None, bg: None, underline_color: None, ..s });
        theme.selection = theme.selection.add_modifier(Modifier::REVERSED);
        theme.tab_active = theme.tab_active.add_modifier(Modifier::REVERSED | Modifier::BOLD);
        theme.r#match = theme.r#match.add_modifier(Modifier::REVERSED);
        theme.match_current = theme.match_current.add_modifier(Modifier::REVERSED | Modifier::BOLD);
        theme.toast_error = theme.toast_error.add_modifier(Modifier::REVERSED | Modifier::BOLD);
        theme.toast_info = theme.toast_info.add_modifier(Modifier::REVERSED);
        theme.status_bar = theme.status_bar.add_modifier(Modifier::REVERSED);
        theme.gauge_filled = theme.gauge_filled.add_modifier(Modifier::BOLD);
        theme
    }

    /// Whether `NO_COLOR` asks for no colour (any non-empty value, per no-color.org).
    pub fn no_color_requested() -> bool {
        std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_theme_sets_every_role() {
        for (name, text) in BUILTIN {
            let table: toml::Table = toml::from_str(text).unwrap();
            for role in ROLES {
                let key = role.trim_start_matches("r#");
                assert!(table.contains_key(key), "{name} lacks {key}");
            }
            let theme = Theme::builtin(name).unwrap();
            assert_ne!(theme.ok, Style::default(), "{name}");
        }
    }

    #[test]
    fn a_user_theme_overrides_only_some_roles() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.toml");
        std::fs::write(&path, "base = \"light\"\nok = \"#00ff00\"\nerror = { fg = 196, bold = true }\n").unwrap();
        let theme = Theme::select(Some(path.to_str().unwrap())).unwrap();
        let light = Theme::builtin("light").unwrap();
        assert_eq!(theme.ok, Style::new().fg(Color::Rgb(0, 255, 0)));
        assert_eq!(theme.error, Style::new().fg(Color::Indexed(196)).add_modifier(Modifier::BOLD));
        assert_eq!(theme.warn, light.warn);
        assert_eq!(theme.name, "mine");
    }

    #[test]
    fn typos_and_bad_colours_are_errors() {
        let base = Theme::builtin("dark").unwrap();
        assert!(Theme::from_toml(base.clone(), "t", "okk = \"red\"").is_err());
        assert!(Theme::from_toml(base.clone(), "t", "ok = \"reddish\"").is_err());
        assert!(Theme::from_toml(base.clone(), "t", "ok = { fg = \"red\", blink = true }").is_err());
        assert!(Theme::from_toml(base, "t", "ok = 300").is_err());
        assert!(Theme::select(Some("/nonexistent/theme.toml")).is_err());
    }

    #[test]
    fn no_color_keeps_modifiers_only() {
        let theme = Theme::builtin("dark").unwrap().without_color();
        for style in [theme.ok, theme.error, theme.selection, theme.popup] {
            assert_eq!((style.fg, style.bg), (None, None));
        }
        assert!(theme.selection.add_modifier.contains(Modifier::REVERSED));
    }
}
