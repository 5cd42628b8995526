//! forgeloop: the one binary behind the WebGPT pull-request loop.
//!
//! Layers (SPEC §2): [`domain`] is pure; [`cycle`] holds the use cases every front end calls;
//! [`store`] and the other adapters do the I/O; [`cli`] is the headless front end.

pub mod checkout;
pub mod cli;
pub mod config;
pub mod cycle;
pub mod demo;
pub mod domain;
pub mod error;
pub mod github;
pub mod mcp;
pub mod redact;
pub mod registry;
pub mod runner;
pub mod store;
pub mod tui;
