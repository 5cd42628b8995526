//! The conversation pane.

pub mod view;
