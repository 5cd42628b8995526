//! forgeloop: the one binary behind the WebGPT pull-request loop.
//!
//! Layers (docs/design.md §2): the core crate (`forgeloop-core`, re-exported here as
//! [`domain`], [`redact`], [`store`] and [`registry`]) is below everything; the adapters
//! ([`config`], [`config_edit`], [`sandbox`], [`egress`], [`runner`], [`results`], [`checkout`],
//! [`github`], [`cache`]) do the I/O; [`cycle`] holds the use cases every front end calls; [`cli`],
//! [`tui`], [`mcp`], [`serve`] and [`demo`] are the front ends. `tests/layers.rs` keeps the
//! table of who may use whom, and design §2.2 is generated from it.

pub use forgeloop_core::{domain, redact, registry, store};

pub mod cache;
pub mod checkout;
pub mod cli;
pub mod config;
pub mod config_edit;
pub mod cycle;
#[cfg(feature = "demo")]
pub mod demo;
pub mod egress;
pub mod error;
pub mod github;
pub mod mcp;
pub mod output;
pub mod results;
pub mod runner;
pub mod sandbox;
pub mod serve;
pub mod signals;
pub mod tui;
