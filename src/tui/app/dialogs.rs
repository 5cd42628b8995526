//! The popups pane: a stack of dialogs drawn over the screen, the top one taking the keys.
//! What a dialog's answer sets off (a use case, a rerun) is the app's to route, see
//! [`Answer`].

use std::path::{Path, PathBuf};

use crate::tui::editor;
use crate::tui::keymap::{Cmd, Context};

use super::Effect;

/// The confirm-brief dialog.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmDialog {
    /// The cycle's state file.
    pub path: PathBuf,
    /// The cycle's name, for the title.
    pub name: String,
    /// The question for WebGPT, as it will be confirmed.
    pub question: String,
    /// Label and text of the five fields, as they will be confirmed.
    pub fields: Vec<(&'static str, String)>,
    /// Who sends the prompt once it is confirmed: the coordinator agent, or the remote client
    /// that drives the cycle itself (`connector:<client>`, design §8.1).
    pub driver: Option<String>,
    /// The wording after an edit (question, brief text); `None` confirms as proposed.
    pub edited: Option<(String, String)>,
    /// The last text from the editor, reopened on the next edit so no work is lost.
    pub draft: Option<String>,
    /// Why the last edit or the confirmation was refused, shown in the dialog.
    pub error: Option<String>,
    /// The confirmation is being carried out: its keys wait.
    pub busy: bool,
    /// Lines scrolled.
    pub scroll: u16,
}

/// The review of a person's message for WebGPT, between `$EDITOR` and the outbox.
#[derive(Debug, Clone, PartialEq)]
pub struct SayDialog {
    /// The cycle's state file.
    pub path: PathBuf,
    /// The cycle's name, for the title.
    pub name: String,
    /// The words as they will be sent (comment lines dropped, trimmed).
    pub text: String,
    /// The whole file from the editor, reopened by `e` so no work is lost.
    pub draft: String,
    /// What sending does to this cycle, one sentence each (after it: a message waiting; a
    /// ready cycle goes back to waiting for a fix).
    pub notes: Vec<String>,
    /// Why sending failed, or the editor did, shown in the dialog.
    pub error: Option<String>,
    /// The message is being put in the outbox: its keys wait.
    pub busy: bool,
    /// Lines scrolled.
    pub scroll: u16,
}

/// The action a yes-or-no question asks about; `Yes` carries it out.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    /// Quit although reruns started here are running (they are cancelled).
    Quit,
    /// Rerun the tests of this cycle.
    Rerun(PathBuf),
    /// Cancel the run of this cycle (here, or by asking the process that holds it).
    CancelRun(PathBuf),
    /// Unblock this cycle.
    Unblock(PathBuf),
    /// Allow the hosts this cycle's last run was refused.
    AllowHosts(PathBuf),
    /// Drop this cycle's pending message.
    DropMessage(PathBuf),
    /// Approve a `NEEDS_REVIEW` pass.
    Approve(PathBuf),
    /// A screen's load the person is asked about first (a grant revoked).
    Screen(crate::tui::panes::ScreenLoad),
    /// A tab's load the person is asked about first (a packet approved).
    Pane(crate::tui::panes::PaneLoad),
}

/// What an input dialog's line is for; `Submit` checks and uses it.
#[derive(Debug, Clone, PartialEq)]
pub enum InputPurpose {
    /// The reason to abort this cycle with.
    Abort(PathBuf),
    /// How many iterations to add to this cycle's cap (digits only).
    Extend(PathBuf),
    /// A tab's load the line completes (a finding's question).
    Pane(Box<crate::tui::panes::PaneLoad>),
}

/// A dialog over the screen; the top one takes the keys.
#[derive(Debug, Clone, PartialEq)]
pub enum Popup {
    /// Review, edit and confirm a proposed brief.
    ConfirmBrief(ConfirmDialog),
    /// Review and send a message for WebGPT.
    Say(SayDialog),
    /// A question answered yes or no.
    YesNo {
        /// What yes does.
        ask: Ask,
        /// The dialog's title, the question itself.
        title: String,
        /// What doing it means, to read before answering.
        body: String,
    },
    /// One line of input.
    Input {
        /// What the line is for.
        purpose: InputPurpose,
        /// The dialog's title.
        title: String,
        /// What to enter, above the line.
        prompt: String,
        /// The line as typed (it starts with a default).
        value: String,
        /// Why the last `Submit` was refused.
        error: Option<String>,
    },
    /// The key help overlay.
    Help {
        /// Lines scrolled.
        scroll: u16,
    },
    /// Something the person should read, such as a page the browser would not open.
    Message {
        /// The dialog's title.
        title: String,
        /// What it says.
        text: String,
        /// Text `y` copies to the clipboard (the page's URL), if any.
        copy: Option<String>,
    },
}

/// What a command given to the top popup asks of the app.
#[derive(Debug, PartialEq)]
pub enum Answer {
    /// Handled inside the popup (or ignored).
    Nothing,
    /// Carry this out (an edit, a confirmation, a copy).
    Effect(Effect),
    /// The person said yes to this question.
    Yes(Ask),
    /// Abort with this reason (a running rerun is cancelled first).
    Abort {
        /// The cycle's state file.
        path: PathBuf,
        /// The person's reason, journaled.
        reason: String,
    },
}

/// The popups shown, bottom to top.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Popups {
    stack: Vec<Popup>,
}

impl<'a> IntoIterator for &'a Popups {
    type Item = &'a Popup;
    type IntoIter = std::slice::Iter<'a, Popup>;

    fn into_iter(self) -> Self::IntoIter {
        self.stack.iter()
    }
}

impl Popups {
    /// Opens `popup` over the others.
    pub fn push(&mut self, popup: Popup) {
        self.stack.push(popup);
    }

    /// Closes the top popup.
    pub fn pop(&mut self) -> Option<Popup> {
        self.stack.pop()
    }

    /// The top popup, the one with the keys.
    pub fn last(&self) -> Option<&Popup> {
        self.stack.last()
    }

    /// No popup is open: the screen has the keys.
    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    /// Bottom to top, the order they are drawn in.
    pub fn iter(&self) -> std::slice::Iter<'_, Popup> {
        self.stack.iter()
    }

    /// The keyboard context of the top popup.
    pub fn context(&self) -> Option<Context> {
        Some(match self.stack.last()? {
            Popup::ConfirmBrief(_) => Context::ConfirmBrief,
            Popup::Say(_) => Context::Say,
            Popup::YesNo { .. } => Context::YesNo,
            Popup::Input { .. } => Context::TextInput,
            Popup::Help { .. } => Context::Help,
            Popup::Message { .. } => Context::Message,
        })
    }

    /// A confirmation or a message is being carried out (the spinner turns).
    pub fn busy(&self) -> bool {
        self.stack.iter().any(|p| matches!(p, Popup::ConfirmBrief(d) if d.busy) || matches!(p, Popup::Say(d) if d.busy))
    }

    /// Pasted text goes into an input line, if that is on top.
    pub fn paste(&mut self, text: &str) {
        if let Some(Popup::Input { value, .. }) = self.stack.last_mut() {
            value.push_str(text);
        }
    }

    /// A command for the top popup.
    pub fn command(&mut self, cmd: Cmd) -> Answer {
        let Some(popup) = self.stack.last_mut() else { return Answer::Nothing };
        match popup {
            Popup::Help { scroll } => match cmd {
                Cmd::Cancel => {
                    self.stack.pop();
                }
                Cmd::Down => *scroll = scroll.saturating_add(1),
                Cmd::Up => *scroll = scroll.saturating_sub(1),
                Cmd::PageDown => *scroll = scroll.saturating_add(10),
                Cmd::PageUp => *scroll = scroll.saturating_sub(10),
                Cmd::Top => *scroll = 0,
                Cmd::Bottom => *scroll = u16::MAX,
                _ => {}
            },
            Popup::Message { copy, .. } => match cmd {
                Cmd::Cancel => {
                    self.stack.pop();
                }
                Cmd::CopyOutbox => {
                    if let Some(text) = copy.clone() {
                        return Answer::Effect(Effect::Copy(text));
                    }
                }
                _ => {}
            },
            Popup::YesNo { ask, .. } => match cmd {
                Cmd::Yes => {
                    let ask = ask.clone();
                    self.stack.pop();
                    return Answer::Yes(ask);
                }
                Cmd::No | Cmd::Cancel => {
                    self.stack.pop();
                }
                _ => {}
            },
            Popup::Input { purpose, value, error, .. } => match cmd {
                Cmd::Insert(c) => {
                    let numeric = matches!(purpose, InputPurpose::Extend(_));
                    if !numeric || c.is_ascii_digit() {
                        value.push(c);
                        *error = None;
                    }
                }
                Cmd::Backspace => {
                    value.pop();
                }
                Cmd::Cancel => {
                    self.stack.pop();
                }
                Cmd::Submit => match purpose.clone() {
                    InputPurpose::Extend(path) => match value.trim().parse::<u32>() {
                        Ok(by) if by >= 1 => {
                            self.stack.pop();
                            return Answer::Effect(Effect::Extend { path, by });
                        }
                        _ => *error = Some("enter a whole number of at least 1".into()),
                    },
                    InputPurpose::Abort(path) => {
                        let reason = value.trim().to_owned();
                        if reason.is_empty() {
                            *error = Some("say why (it is journaled)".into());
                        } else {
                            self.stack.pop();
                            return Answer::Abort { path, reason };
                        }
                    }
                    InputPurpose::Pane(load) => {
                        let text = value.trim().to_owned();
                        if text.is_empty() {
                            *error = Some("write it first (it is journaled)".into());
                        } else {
                            self.stack.pop();
                            return Answer::Effect(Effect::Pane(load.with_text(text)));
                        }
                    }
                },
                _ => {}
            },
            Popup::ConfirmBrief(dialog) => match cmd {
                Cmd::Yes if !dialog.busy => {
                    dialog.busy = true;
                    dialog.error = None;
                    return Answer::Effect(Effect::Confirm {
                        path: dialog.path.clone(),
                        edited: dialog.edited.clone(),
                    });
                }
                Cmd::Edit if !dialog.busy => {
                    let text = dialog.draft.clone().unwrap_or_else(|| {
                        let (question, brief) = match &dialog.edited {
                            Some((q, b)) => (q.clone(), b.clone()),
                            None => (
                                dialog.question.clone(),
                                dialog
                                    .fields
                                    .iter()
                                    .map(|(l, t)| format!("{l}: {}", t.replace('\n', "\n  ")))
                                    .collect::<Vec<_>>()
                                    .join("\n"),
                            ),
                        };
                        editor::compose(&question, &brief)
                    });
                    return Answer::Effect(Effect::EditBrief { path: dialog.path.clone(), text });
                }
                Cmd::No | Cmd::Cancel if !dialog.busy => {
                    self.stack.pop();
                }
                Cmd::Down | Cmd::Up | Cmd::PageDown | Cmd::PageUp => scroll(&mut dialog.scroll, cmd),
                _ => {}
            },
            Popup::Say(dialog) => match cmd {
                Cmd::Yes if !dialog.busy => {
                    dialog.busy = true;
                    dialog.error = None;
                    return Answer::Effect(Effect::Say { path: dialog.path.clone(), text: dialog.text.clone() });
                }
                Cmd::Edit if !dialog.busy => {
                    return Answer::Effect(Effect::EditMessage {
                        path: dialog.path.clone(),
                        text: dialog.draft.clone(),
                    });
                }
                // The draft stays with the app: `m` reopens it.
                Cmd::No | Cmd::Cancel if !dialog.busy => {
                    self.stack.pop();
                }
                Cmd::Down | Cmd::Up | Cmd::PageDown | Cmd::PageUp => scroll(&mut dialog.scroll, cmd),
                Cmd::Top => dialog.scroll = 0,
                Cmd::Bottom => dialog.scroll = u16::MAX,
                _ => {}
            },
        }
        Answer::Nothing
    }

    /// The message dialog for `path`, if it is on top.
    pub fn say_dialog(&mut self, path: &Path) -> Option<&mut SayDialog> {
        match self.stack.last_mut() {
            Some(Popup::Say(dialog)) if dialog.path == path => Some(dialog),
            _ => None,
        }
    }

    /// The message for `path` was sent (its dialog closes) or refused (the dialog shows why
    /// and keeps the words): `true` when a dialog took the outcome.
    pub fn say_done(&mut self, path: &Path, result: &Result<String, String>) -> bool {
        let Some(dialog) = self.say_dialog(path) else { return false };
        match result {
            Ok(_) => {
                self.stack.pop();
            }
            Err(error) => {
                dialog.busy = false;
                dialog.error = Some(format!(
                    "{error}. Nothing was sent; your words are kept (e edits them, Esc keeps them for m)."
                ));
            }
        }
        true
    }

    /// The confirm dialog for `path`, if it is on top.
    fn confirm_dialog(&mut self, path: &Path) -> Option<&mut ConfirmDialog> {
        match self.stack.last_mut() {
            Some(Popup::ConfirmBrief(dialog)) if dialog.path == path => Some(dialog),
            _ => None,
        }
    }

    /// The editor returned: the dialog shows the edited wording, or why it is refused.
    pub fn editor_finished(&mut self, path: &Path, result: Result<String, String>) {
        let Some(dialog) = self.confirm_dialog(path) else { return };
        match result {
            Err(error) => dialog.error = Some(error),
            Ok(text) => {
                dialog.draft = Some(text.clone());
                match editor::parse(&text) {
                    Ok((question, brief)) => {
                        dialog.question = question.clone();
                        dialog.fields = crate::domain::brief::Field::ALL
                            .iter()
                            .map(|f| (f.label(), brief.get(*f).to_owned()))
                            .collect();
                        dialog.edited = Some((question, brief.render()));
                        dialog.error = None;
                    }
                    Err(error) => {
                        dialog.error = Some(format!("{error}. Nothing was changed; press e to fix it."));
                    }
                }
            }
        }
    }

    /// The confirmation of `path` finished. On success its dialog closes; a failure is shown
    /// in it (`true`), or, with no dialog open, left to the caller (`false`).
    pub fn confirm_done(&mut self, path: &Path, result: &Result<String, String>) -> bool {
        let Some(dialog) = self.confirm_dialog(path) else { return false };
        match result {
            Ok(_) => {
                self.stack.pop();
                false
            }
            Err(error) => {
                dialog.busy = false;
                dialog.error = Some(error.clone());
                true
            }
        }
    }
}

/// A dialog's text scrolled by a line or a page.
fn scroll(offset: &mut u16, cmd: Cmd) {
    *offset = match cmd {
        Cmd::Down => offset.saturating_add(1),
        Cmd::Up => offset.saturating_sub(1),
        Cmd::PageDown => offset.saturating_add(10),
        Cmd::PageUp => offset.saturating_sub(10),
        _ => *offset,
    };
}
