//! The detail pane's tabs, generated from the registry's list (`tui/registry.rs`): the struct
//! holding every tab's pane, the wrapper enums over their own messages and loads, and the
//! dispatch of keys, messages, requests and what changed to the pane concerned. Nothing here
//! names a tab; a tab's behaviour is in its folder.

use std::path::PathBuf;

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::cycle::Ctx;
use crate::tui::keymap::{Binding, Cmd, Context};
use crate::tui::model::CycleEntry;
use crate::tui::pager::log::LogEvent;
use crate::tui::registry::{Tab, for_each_tab};

use super::{Cx, Draw, Loaded, Pane, PaneWork, Reply, Request, RunsListed, SearchLine, Selection, SharedLoad};

/// What panes asked for in one call: their own loads (with whose they are) and shared reads.
#[derive(Debug, Default, PartialEq)]
pub struct Asked {
    /// Loads, each addressed to the pane that asked.
    pub own: Vec<PaneLoad>,
    /// Reads whose result the tabs share.
    pub shared: Vec<SharedLoad>,
    /// A question for the person and the load a yes carries out.
    pub confirm: Option<(String, String, PaneLoad)>,
    /// A line to ask the person for, and the load it completes.
    pub text: Option<(String, String, PaneLoad)>,
}

/// Runs `f` on `pane` with a context, and keeps what it asked for, wrapped as that pane's.
fn with<P: Pane, R>(
    pane: &mut P,
    loaded: &mut Loaded,
    sel: &Selection,
    wrap: fn(P::Load) -> PaneLoad,
    asked: &mut Asked,
    f: impl FnOnce(&mut P, &mut Cx<P::Load>) -> R,
) -> R {
    let mut cx = Cx::new(sel, loaded);
    let out = f(pane, &mut cx);
    asked.own.extend(cx.own.into_iter().map(wrap));
    asked.shared.extend(cx.shared);
    if let Some((title, body, load)) = cx.confirm {
        asked.confirm = Some((title, body, wrap(load)));
    }
    if let Some((title, prompt, load)) = cx.text {
        asked.text = Some((title, prompt, wrap(load)));
    }
    out
}

macro_rules! tabs_struct {
    ($( $variant:ident $module:ident :: $pane:ident $title:literal $key:literal $name:literal; )*) => {
        /// The detail pane: which tab is shown, what the tabs share, and each tab's pane.
        #[derive(Debug)]
        pub struct Tabs {
            /// The tab shown.
            pub tab: Tab,
            /// What the selected cycle's tabs share.
            pub loaded: Loaded,
            $(
                #[doc = concat!("The ", $title, " tab.")]
                pub $module: super::$module::$pane,
            )*
        }

        impl Default for Tabs {
            fn default() -> Self {
                Tabs { tab: Tab::first(), loaded: Loaded::default(), $($module: Default::default(),)* }
            }
        }

        /// An answer to a pane's load, addressed to that pane.
        #[derive(Debug, Clone)]
        pub enum PaneMsg {
            $(
                #[doc = concat!("For the ", $title, " tab.")]
                $variant(<super::$module::$pane as Pane>::Msg),
            )*
        }

        /// A pane's load, with whose it is.
        #[derive(Debug, Clone, PartialEq)]
        pub enum PaneLoad {
            $(
                #[doc = concat!("The ", $title, " tab's.")]
                $variant(<super::$module::$pane as Pane>::Load),
            )*
        }

        impl PaneLoad {
            /// The work it takes; its outcome is the asking pane's message.
            pub fn work(self, ctx: &Ctx) -> PaneWork<PaneMsg> {
                match self {
                    $(PaneLoad::$variant(load) => <super::$module::$pane as Pane>::work(load, ctx).map(PaneMsg::$variant),)*
                }
            }

            /// Completed with the line the person wrote for it (`Cx::ask_text`).
            // A pane that loads nothing has an empty `Load`: its arm cannot be reached.
            #[allow(unreachable_code)]
            pub fn with_text(self, text: String) -> PaneLoad {
                match self {
                    $(PaneLoad::$variant(load) => PaneLoad::$variant(<super::$module::$pane as Pane>::with_text(load, text)),)*
                }
            }
        }

        impl PaneMsg {
            /// An answer of the log reader, for the pane that reads logs.
            pub fn from_reader(answer: &LogEvent) -> Option<PaneMsg> {
                $(
                    if let Some(msg) = <super::$module::$pane as Pane>::from_reader(answer) {
                        return Some(PaneMsg::$variant(msg));
                    }
                )*
                None
            }
        }

        impl Tabs {
            /// Each tab's stack of keyboard contexts.
            pub fn stacks() -> Vec<&'static [Context]> {
                vec![$(<super::$module::$pane as Pane>::CONTEXTS),*]
            }

            /// Each tab's own rows of the keymap.
            pub fn keys() -> impl Iterator<Item = &'static Binding> {
                [$(<super::$module::$pane as Pane>::KEYS),*].into_iter().flatten()
            }

            /// The shown tab's keyboard contexts.
            pub fn contexts(&self) -> &'static [Context] {
                match self.tab { $(Tab::$variant => self.$module.contexts(),)* }
            }

            /// The shown tab's say on whether `cmd` makes sense now.
            pub fn available(&self, cmd: Cmd, sel: &Selection) -> Option<bool> {
                match self.tab { $(Tab::$variant => self.$module.available(cmd, sel, &self.loaded),)* }
            }

            /// The shown tab's search line, if it has one.
            pub fn search(&self) -> Option<&SearchLine> {
                match self.tab { $(Tab::$variant => self.$module.search(),)* }
            }

            /// The shown tab's search line is open.
            pub fn editing(&self) -> bool {
                match self.tab { $(Tab::$variant => self.$module.editing(),)* }
            }

            /// Text pasted into the shown tab's search line.
            pub fn paste(&mut self, text: &str) {
                match self.tab { $(Tab::$variant => self.$module.paste(text),)* }
            }

            /// Draws the shown tab.
            pub fn render(&self, draw: &Draw, entry: &CycleEntry, frame: &mut Frame, area: Rect) {
                match self.tab { $(Tab::$variant => self.$module.render(draw, entry, frame, area),)* }
            }

            /// Some tab waits for something (the spinner turns).
            pub fn busy(&self) -> bool {
                false $(|| self.$module.busy())*
            }

            /// The shown tab shows runs.
            pub fn follows_runs(&self) -> bool {
                match self.tab { $(Tab::$variant => self.$module.follows_runs(),)* }
            }

            /// Shows `tab`; a tab chosen from another starts at its top.
            pub fn set_tab(&mut self, tab: Tab) {
                if self.tab != tab {
                    self.tab = tab;
                    match tab { $(Tab::$variant => self.$module.opened(),)* }
                }
            }

            /// A command for the shown tab, and what follows from its reply; the reply the app
            /// must act on (`NotMine`, `Refused`, `Note`, `DiffMade`), else `Done`.
            pub fn command(&mut self, cmd: Cmd, sel: &Selection, asked: &mut Asked) -> Reply {
                let tab = self.tab;
                let reply = match tab {
                    $(Tab::$variant => with(&mut self.$module, &mut self.loaded, sel, PaneLoad::$variant, asked, |p, cx| Pane::command(p, cmd, cx)),)*
                };
                self.settle(tab, reply, sel, asked)
            }

            /// A key for the shown tab's open search line.
            pub fn input(&mut self, cmd: Cmd, sel: &Selection, asked: &mut Asked) {
                match self.tab {
                    $(Tab::$variant => with(&mut self.$module, &mut self.loaded, sel, PaneLoad::$variant, asked, |p, cx| Pane::input(p, cmd, cx)),)*
                }
            }

            /// The shown tab became visible: it asks for what it needs.
            pub fn shown(&mut self, sel: &Selection, asked: &mut Asked) {
                match self.tab {
                    $(Tab::$variant => with(&mut self.$module, &mut self.loaded, sel, PaneLoad::$variant, asked, |p, cx| Pane::shown(p, cx)),)*
                }
            }

            /// The selected cycle's state was read again: the shown tab looks at it.
            pub fn cycle_reloaded(&mut self, sel: &Selection, asked: &mut Asked) {
                match self.tab {
                    $(Tab::$variant => with(&mut self.$module, &mut self.loaded, sel, PaneLoad::$variant, asked, |p, cx| Pane::cycle_reloaded(p, cx)),)*
                }
            }

            /// An answer to a pane's load, for that pane; what the app must act on.
            pub fn receive(&mut self, msg: PaneMsg, sel: &Selection, asked: &mut Asked) -> Reply {
                let (tab, reply) = match msg {
                    $(PaneMsg::$variant(msg) => (Tab::$variant, with(&mut self.$module, &mut self.loaded, sel, PaneLoad::$variant, asked, |p, cx| Pane::receive(p, msg, cx))),)*
                };
                self.settle(tab, reply, sel, asked)
            }

            /// Another cycle is selected: every tab forgets the last one's, and so do the caches.
            pub fn forget(&mut self, sel: &Selection, asked: &mut Asked) {
                self.loaded = Loaded::default();
                $(with(&mut self.$module, &mut self.loaded, sel, PaneLoad::$variant, asked, |p, cx| Pane::forget(p, cx));)*
            }

            /// The terminal's size changed.
            pub fn resized(&mut self, sel: &Selection, asked: &mut Asked) {
                $(with(&mut self.$module, &mut self.loaded, sel, PaneLoad::$variant, asked, |p, cx| Pane::resized(p, cx));)*
            }

            /// Files of runs changed on disk.
            pub fn run_files_changed(&mut self, paths: &[PathBuf], sel: &Selection, asked: &mut Asked) {
                $(with(&mut self.$module, &mut self.loaded, sel, PaneLoad::$variant, asked, |p, cx| Pane::run_files_changed(p, paths, cx));)*
            }

            /// A cache in [`Loaded`] changed.
            pub fn loaded_changed(&mut self, sel: &Selection, asked: &mut Asked) {
                $(with(&mut self.$module, &mut self.loaded, sel, PaneLoad::$variant, asked, |p, cx| Pane::loaded_changed(p, cx));)*
            }

            /// The selected cycle's `runs/` was listed again (`fresh`: a new log in it): a tab may
            /// take the place of the shown one to follow a live run; a tab that shows runs looks
            /// again.
            pub fn runs_listed(&mut self, fresh: bool, running: bool, sel: &Selection, asked: &mut Asked) {
                let shown = self.tab;
                let runs_shown = self.follows_runs();
                let mut show = None;
                $(
                    let what = RunsListed { fresh, running, shown: shown == Tab::$variant, runs_shown };
                    if with(&mut self.$module, &mut self.loaded, sel, PaneLoad::$variant, asked, |p, cx| Pane::runs_listed(p, what, cx)) == Reply::ShowMe {
                        show.get_or_insert(Tab::$variant);
                    }
                )*
                if let Some(tab) = show {
                    self.tab = tab;
                }
                if self.follows_runs() {
                    self.shown(sel, asked);
                }
            }

            /// Offers `request` to every tab; the first that asks to be shown is.
            fn request(&mut self, request: &Request, sel: &Selection, asked: &mut Asked) {
                let mut show = None;
                $(
                    if with(&mut self.$module, &mut self.loaded, sel, PaneLoad::$variant, asked, |p, cx| Pane::request(p, request, cx)) == Reply::ShowMe {
                        show.get_or_insert(Tab::$variant);
                    }
                )*
                if let Some(tab) = show {
                    self.set_tab(tab);
                    self.shown(sel, asked);
                }
            }
        }
    };
}

impl Tabs {
    /// Does what a reply of the pane of `from` asks of the tabs; returns what is left for the app.
    fn settle(&mut self, from: Tab, reply: Reply, sel: &Selection, asked: &mut Asked) -> Reply {
        match reply {
            Reply::Ask(request) => {
                self.request(&request, sel, asked);
                Reply::Done
            }
            Reply::ShowMe => {
                self.set_tab(from);
                self.shown(sel, asked);
                Reply::Done
            }
            Reply::Reload => {
                self.shown(sel, asked);
                Reply::Done
            }
            other => other,
        }
    }
}

for_each_tab!(tabs_struct);
