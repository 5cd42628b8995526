//! The help pane.

pub mod view;
