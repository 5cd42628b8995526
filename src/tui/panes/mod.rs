//! The control room's panes, one folder each: its state, its key handling and its view.

pub mod brief;
pub mod conversation;
pub mod diff;
pub mod help;
pub mod list;
pub mod log;
pub mod project;
pub mod projects;
pub mod runs;
