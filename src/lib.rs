//! forgeloop: the one binary behind the WebGPT pull-request loop.
//!
//! Layers (SPEC §2): [`domain`] is pure; [`cycle`] holds the use cases every front end calls;
//! [`store`] and the other adapters do the I/O; [`cli`] is the headless front end.

#[cfg(feature = "app")]
pub mod checkout;
#[cfg(feature = "app")]
pub mod cli;
#[cfg(feature = "app")]
pub mod config;
#[cfg(feature = "app")]
pub mod cycle;
#[cfg(feature = "demo")]
pub mod demo;
pub mod domain;
#[cfg(feature = "app")]
pub mod error;
#[cfg(feature = "app")]
pub mod github;
#[cfg(feature = "app")]
pub mod mcp;
#[cfg(feature = "app")]
pub mod output;
pub mod redact;
pub mod registry;
#[cfg(feature = "app")]
pub mod runner;
#[cfg(feature = "app")]
pub mod sandbox;
#[cfg(feature = "app")]
pub mod signals;
pub mod store;
#[cfg(feature = "app")]
pub mod tui;
