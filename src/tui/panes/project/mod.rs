//! The project pane.

pub mod view;
