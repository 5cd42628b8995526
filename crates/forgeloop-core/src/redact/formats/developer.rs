//! Developer tools: CI/CD, package registries, code hosts beyond GitHub, observability,
//! project tools.

#[allow(unused_imports)]
use super::*;

pub(super) static ROWS: &[Format] = &[];
