//! Business APIs: payment, messaging and e-mail, social networks, AI providers and other
//! SaaS APIs.

#[allow(unused_imports)]
use super::*;

pub(super) static ROWS: &[Format] = &[
    // Adafruit IO keys: 32 characters of `[a-z0-9_-]`, no prefix.
    context("adafruit-api-key", "adafruit-api-key", &["adafruit"], "[a-z0-9_-]{32}", LOWER_DIGITS_DASH, (32, 32)),
];
