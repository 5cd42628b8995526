//! The brief pane.

pub mod view;
