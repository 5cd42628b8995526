//! The alphabets the formats table writes a context row's value in (`[a-z0-9]{32}` is drawn
//! from `LOWER_DIGITS`), shared with the table tests' sample generators.
#![allow(dead_code)] // some alphabets serve only the generated samples of the table tests

pub(crate) const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
pub(crate) const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
pub(crate) const DIGITS: &str = "0123456789";
pub(crate) const HEX: &str = "0123456789abcdef";
pub(crate) const B62: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub(crate) const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
pub(crate) const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub(crate) const AWS_ID: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
/// `[a-z0-9]`, `[a-z0-9_-]`, `[A-Z0-9]`, `[A-Fa-f0-9]`: the other alphabets providers use.
pub(crate) const LOWER_DIGITS: &str = "abcdefghijklmnopqrstuvwxyz0123456789";
pub(crate) const LOWER_DIGITS_DASH: &str = "abcdefghijklmnopqrstuvwxyz0123456789_-";
pub(crate) const UPPER_DIGITS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
pub(crate) const HEX_ANY_CASE: &str = "0123456789abcdefABCDEF";
