//! The screens besides the cycles, generated from the registry's list (`tui/registry.rs`): the
//! struct holding each screen's pane, the wrapper enums over their own messages and loads, and
//! the dispatch to the screen concerned. Nothing here names a screen.

use std::path::PathBuf;

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::cycle::Ctx;
use crate::tui::keymap::{Binding, Cmd, Context};
use crate::tui::model::Roots;
use crate::tui::registry::{Screen, for_each_screen};

use super::{Draw, PaneWork, RegistryRead, Reply, ScreenCx, ScreenPane, SharedLoad};

/// What screens asked for in one call.
#[derive(Debug, Default)]
pub struct ScreenAsked {
    /// Loads, each addressed to the screen that asked.
    pub own: Vec<ScreenLoad>,
    /// Reads the panes share.
    pub shared: Vec<SharedLoad>,
    /// A question for the person and the load a yes carries out.
    pub confirm: Option<(String, String, ScreenLoad)>,
}

/// Runs `f` on `pane` with a context, and keeps what it asked for, wrapped as that screen's.
fn with<P: ScreenPane, R>(
    pane: &mut P,
    registry: &RegistryRead,
    wrap: fn(P::Load) -> ScreenLoad,
    asked: &mut ScreenAsked,
    f: impl FnOnce(&mut P, &mut ScreenCx<P::Load>) -> R,
) -> R {
    let mut cx = ScreenCx::new(registry);
    let out = f(pane, &mut cx);
    asked.own.extend(cx.own.into_iter().map(wrap));
    asked.shared.extend(cx.shared);
    if let Some((title, body, load)) = cx.confirm {
        asked.confirm = Some((title, body, wrap(load)));
    }
    out
}

macro_rules! screens_struct {
    ($( $variant:ident $module:ident :: $pane:ident $title:literal $key:literal $name:literal $hint:literal $help:literal; )*) => {
        /// Each screen's pane.
        #[derive(Debug, Default)]
        pub struct Screens {
            $(
                #[doc = concat!("The ", $title, " screen.")]
                pub $module: super::$module::$pane,
            )*
        }

        /// An answer to a screen's load, addressed to that screen.
        #[derive(Debug, Clone)]
        pub enum ScreenMsg {
            $(
                #[doc = concat!("For the ", $title, " screen.")]
                $variant(<super::$module::$pane as ScreenPane>::Msg),
            )*
        }

        /// A screen's load, with whose it is.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ScreenLoad {
            $(
                #[doc = concat!("The ", $title, " screen's.")]
                $variant(<super::$module::$pane as ScreenPane>::Load),
            )*
        }

        impl ScreenLoad {
            /// The work it takes; its outcome is the asking screen's message.
            pub fn work(self, ctx: &Ctx) -> PaneWork<ScreenMsg> {
                match self {
                    $(ScreenLoad::$variant(load) => <super::$module::$pane as ScreenPane>::work(load, ctx).map(ScreenMsg::$variant),)*
                }
            }
        }

        impl Screens {
            /// Each screen's stack of keyboard contexts.
            pub fn stacks() -> Vec<&'static [Context]> {
                vec![$(<super::$module::$pane as ScreenPane>::CONTEXTS),*]
            }

            /// Each screen's own rows of the keymap.
            pub fn keys() -> impl Iterator<Item = &'static Binding> {
                [$(<super::$module::$pane as ScreenPane>::KEYS),*].into_iter().flatten()
            }

            /// The directories the screens watch.
            pub fn watched(roots: &Roots) -> Vec<PathBuf> {
                let mut dirs = Vec::new();
                $(dirs.extend(<super::$module::$pane as ScreenPane>::watched(roots));)*
                dirs
            }

            /// The keyboard contexts of `screen` (the cycles' are the app's).
            pub fn contexts(screen: Screen) -> &'static [Context] {
                match screen {
                    Screen::Cycles => &[],
                    $(Screen::$variant => <super::$module::$pane as ScreenPane>::CONTEXTS,)*
                }
            }

            /// `screen`'s say on whether `cmd` makes sense now.
            pub fn available(&self, screen: Screen, cmd: Cmd, registry: &RegistryRead) -> Option<bool> {
                match screen {
                    Screen::Cycles => None,
                    $(Screen::$variant => self.$module.available_with(cmd, registry),)*
                }
            }

            /// A command for `screen`.
            pub fn command(&mut self, screen: Screen, cmd: Cmd, registry: &RegistryRead, asked: &mut ScreenAsked) -> Reply {
                match screen {
                    Screen::Cycles => Reply::NotMine,
                    $(Screen::$variant => with(&mut self.$module, registry, ScreenLoad::$variant, asked, |p, cx| ScreenPane::command(p, cmd, cx)),)*
                }
            }

            /// `screen` is shown.
            pub fn shown(&mut self, screen: Screen, registry: &RegistryRead, asked: &mut ScreenAsked) {
                match screen {
                    Screen::Cycles => {}
                    $(Screen::$variant => with(&mut self.$module, registry, ScreenLoad::$variant, asked, |p, cx| p.shown(cx)),)*
                }
            }

            /// The control room starts.
            pub fn started(&mut self, registry: &RegistryRead, asked: &mut ScreenAsked) {
                $(with(&mut self.$module, registry, ScreenLoad::$variant, asked, |p, cx| p.started(cx));)*
            }

            /// Files changed: each screen whose directory holds one looks again.
            pub fn files_changed(&mut self, roots: &Roots, paths: &[PathBuf], registry: &RegistryRead, asked: &mut ScreenAsked) {
                $(
                    if let Some(dir) = <super::$module::$pane as ScreenPane>::watched(roots)
                        && paths.iter().any(|p| p.starts_with(&dir))
                    {
                        with(&mut self.$module, registry, ScreenLoad::$variant, asked, |p, cx| p.files_changed(cx));
                    }
                )*
            }

            /// The registry was read again.
            pub fn registry_read(&mut self, registry: &RegistryRead) {
                $(self.$module.registry_read(registry);)*
            }

            /// An answer to a screen's load, for that screen.
            pub fn receive(&mut self, msg: ScreenMsg, registry: &RegistryRead, asked: &mut ScreenAsked) -> Reply {
                match msg {
                    $(ScreenMsg::$variant(msg) => with(&mut self.$module, registry, ScreenLoad::$variant, asked, |p, cx| p.receive(msg, cx)),)*
                }
            }

            /// What the header shows of the screens, `(compact, full)`.
            pub fn badges(&self) -> Vec<(&'static str, &'static str)> {
                let mut badges = Vec::new();
                $(badges.extend(self.$module.badge());)*
                badges
            }

            /// Draws `screen`.
            pub fn render(&self, screen: Screen, draw: &Draw, frame: &mut Frame, area: Rect) {
                match screen {
                    Screen::Cycles => {}
                    $(Screen::$variant => self.$module.render(draw, frame, area),)*
                }
            }
        }
    };
}

for_each_screen!(screens_struct);
