//! forgeloop's core, the layers below the adapters (docs/design.md §2): [`domain`] is pure (no
//! I/O, no clock, no network); [`redact`] masks secrets and local paths in everything that
//! leaves the process; [`store`] writes files atomically under locks and keeps the journal;
//! [`registry`] holds the ChatGPT Project records. A crate of its own, so the compiler keeps
//! these from ever reaching up into an adapter or a front end, and the fuzz targets build
//! without the product's heavy dependencies.

pub mod domain;
pub mod redact;
pub mod registry;
pub mod store;
