//! Business APIs: payment, messaging and e-mail, social networks, AI providers and other
//! SaaS APIs.
//!
//! Tokens with a prefix of their own are `regex` rows. Tokens without one are `context` rows
//! (the provider's name, an assignment, the value); where the value has a structure of its
//! own (a UUID, `live_…`, `key-…`, `123:A…`) that an alphabet and a length cannot generate,
//! a `context_written` row brings its own samples and near misses.

#[allow(unused_imports)]
use super::*;

/// `[A-Za-z0-9+/_-]`: base64 of either flavour (without `=`, which a sample's assignment
/// could swallow).
const B64_ANY: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-";
#[cfg(test)]
const HEX_UPPER: &str = "0123456789ABCDEF";

/// A UUID, the value of several context rows.
const UUID_RE: &str = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

/// The name without an assignment, and `wrong` (a value of the wrong shape) after it.
#[cfg(test)]
fn named_misses(name: &str, wrong: &[String]) -> Vec<String> {
    let mut misses = vec![format!("see the {name} documentation for how to create one")];
    misses.extend(wrong.iter().map(|w| format!("{name}_value = \"{w}\"")));
    misses
}

#[cfg(test)]
fn uuid(s: &mut Seed, alphabet: &str) -> String {
    let parts: Vec<String> = [8, 4, 4, 4, 12].iter().map(|&n| s.mixed(alphabet, n)).collect();
    parts.join("-")
}

/// A UUID after the provider's name.
macro_rules! uuid_row {
    ($id:literal, $kind:literal, $keywords:expr, $name:literal) => {
        context_written!(
            $id,
            $kind,
            $keywords,
            UUID_RE,
            |s| {
                let v = uuid(s, HEX);
                context_assignment($name, v, s)
            },
            |s| {
                let short = uuid(s, HEX);
                let wrong = uuid(s, LOWER);
                named_misses($name, &[short[1..].to_owned(), wrong])
            },
        )
    };
}

pub(super) static ROWS: &[Format] = &[
    // Adafruit IO keys: 32 characters of `[a-z0-9_-]`, no prefix.
    context("adafruit-api-key", "adafruit-api-key", &["adafruit"], "[a-z0-9_-]{32}", LOWER_DIGITS_DASH, (32, 32)),
    // ---- AI providers ----
    // Cohere: 40 alphanumerics, no prefix (`CO_API_KEY` is its SDK's variable).
    context("cohere-api-key", "cohere-api-key", &["cohere", "co_api_key"], "[a-z0-9]{40}", B62, (40, 40)),
    // Mistral: 32 alphanumerics, no prefix.
    context("mistral-api-key", "mistral-api-key", &["mistral"], "[a-z0-9]{32}", B62, (32, 32)),
    // Hugging Face tokens are `hf_` and 34 letters; the mixed-case row in `tokens.rs` takes
    // any run of 30 or more, this one a run of exactly 34 letters in one case, if random.
    Format {
        entropy: Some(3.5),
        ..regex!(
            "huggingface-letters-token",
            "huggingface-token",
            &["hf_"],
            r"(hf_[A-Za-z]{34})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("hf_{}", s.chars(LOWER, 34))),
            |s| {
                vec![
                    format!("hf_{}", s.chars(LOWER, 33)),
                    format!("hf_{}", s.chars(LOWER, 35)),
                    format!("hf_{}", "ab".repeat(17)),
                    format!("xhf_{}", s.chars(LOWER, 34)),
                ]
            },
        )
    },
    // Hugging Face organisation API tokens (legacy): `api_org_` and 34 letters.
    Format {
        entropy: Some(3.5),
        ..regex!(
            "huggingface-org-token",
            "huggingface-token",
            &["api_org_"],
            r"(api_org_[A-Za-z]{34})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("api_org_{}", s.mixed(&format!("{UPPER}{LOWER}"), 34))),
            |s| {
                vec![
                    format!("api_org_{}", s.chars(LOWER, 33)),
                    format!("api_org_{}", s.mixed(B62, 34)),
                    format!("api_org_{}", "ab".repeat(17)),
                    format!("my_api_org_{}", s.chars(LOWER, 34)),
                ]
            },
        )
    },
    // Perplexity: `pplx-` and 48 alphanumerics.
    Format {
        classes: Classes::UpperLowerDigit,
        ..regex!(
            "perplexity-api-key",
            "perplexity-api-key",
            &["pplx-"],
            r"(pplx-[A-Za-z0-9]{48})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("pplx-{}", s.mixed(B62, 48))),
            |s| {
                vec![
                    format!("pplx-{}", s.mixed(B62, 47)),
                    format!("pplx-{}", s.mixed(B62, 49)),
                    format!("pplx-{}", s.chars(LOWER, 48)),
                    format!("pplq-{}", s.mixed(B62, 48)),
                    format!("xpplx-{}", s.mixed(B62, 48)),
                ]
            },
        )
    },
    // Replicate: `r8_` and 37 alphanumerics.
    Format {
        classes: Classes::UpperLowerDigit,
        ..regex!(
            "replicate-api-token",
            "replicate-api-token",
            &["r8_"],
            r"(r8_[A-Za-z0-9]{37})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("r8_{}", s.mixed(B62, 37))),
            |s| {
                vec![
                    format!("r8_{}", s.mixed(B62, 36)),
                    format!("r8_{}", s.mixed(B62, 38)),
                    format!("r8_{}", s.chars(LOWER, 37)),
                    format!("r9_{}", s.mixed(B62, 37)),
                    format!("xr8_{}", s.mixed(B62, 37)),
                ]
            },
        )
    },
    // Groq: `gsk_` and 52 alphanumerics.
    Format {
        classes: Classes::UpperLowerDigit,
        ..regex!(
            "groq-api-key",
            "groq-api-key",
            &["gsk_"],
            r"(gsk_[A-Za-z0-9]{52})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("gsk_{}", s.mixed(B62, 52))),
            |s| {
                vec![
                    format!("gsk_{}", s.mixed(B62, 51)),
                    format!("gsk_{}", s.mixed(B62, 53)),
                    format!("gsk_{}", s.chars(LOWER, 52)),
                    format!("gsc_{}", s.mixed(B62, 52)),
                    format!("xgsk_{}", s.mixed(B62, 52)),
                ]
            },
        )
    },
    // xAI: `xai-` and 80 alphanumerics.
    Format {
        classes: Classes::UpperLowerDigit,
        ..regex!(
            "xai-api-key",
            "xai-api-key",
            &["xai-"],
            r"(xai-[A-Za-z0-9]{80})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("xai-{}", s.mixed(B62, 80))),
            |s| {
                vec![
                    format!("xai-{}", s.mixed(B62, 79)),
                    format!("xai-{}", s.mixed(B62, 81)),
                    format!("xai-{}", s.chars(LOWER, 80)),
                    format!("xaj-{}", s.mixed(B62, 80)),
                    format!("exai-{}", s.mixed(B62, 80)),
                ]
            },
        )
    },
    // ---- Payment and finance ----
    // Adobe: OAuth client secrets are `p8e-` and 32 alphanumerics; client ids are 32 hex
    // digits after the name.
    Format {
        entropy: Some(3.0),
        ..regex!(
            "adobe-client-secret",
            "adobe-client-secret",
            &["p8e-"],
            r"(p8e-[A-Za-z0-9]{32})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("p8e-{}", s.mixed(B62, 32))),
            |s| {
                vec![
                    format!("p8e-{}", s.mixed(B62, 31)),
                    format!("p8e-{}", s.mixed(B62, 33)),
                    format!("p9e-{}", s.mixed(B62, 32)),
                    format!("xp8e-{}", s.mixed(B62, 32)),
                ]
            },
        )
    },
    context("adobe-client-id", "adobe-client-id", &["adobe"], "[a-f0-9]{32}", HEX, (32, 32)),
    // Square: access tokens `EAAA…` (sandbox and production) and `sq0atp-…`, application
    // secrets `sq0csp-…`.
    Format {
        entropy: Some(3.0),
        ..regex!(
            "square-token",
            "square-token",
            &["EAAA", "sq0atp-", "sq0csp-"],
            r"((?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_-]{22,60})(?:[^A-Za-z0-9_-]|\z)",
            |s| {
                let prefix = s.pick(&["EAAA", "sq0atp-", "sq0csp-"]);
                let len = 22 + s.below(39);
                Sample::token(format!("{prefix}{}", s.mixed(B64URL, len)))
            },
            |s| {
                vec![
                    format!("EAAA{}", s.mixed(B62, 21)),
                    format!("sq0atp-{}", s.mixed(B62, 61)),
                    format!("sq0xxp-{}", s.mixed(B62, 30)),
                    format!("xEAAA{}", s.mixed(B62, 30)),
                    format!("EAAA{}", "ab".repeat(15)),
                ]
            },
        )
    },
    // Shopify: admin API access tokens, custom-app and private-app tokens, shared secrets.
    regex!(
        "shopify-token",
        "shopify-token",
        &["shpat_", "shpca_", "shppa_", "shpss_"],
        r"(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("{}{}", s.pick(&["shpat_", "shpca_", "shppa_", "shpss_"]), s.chars(HEX, 32))),
        |s| {
            vec![
                format!("shpat_{}", s.chars(HEX, 31)),
                format!("shpat_{}", s.chars(HEX, 33)),
                format!("shpat_{}", s.chars(LOWER, 32)),
                format!("shpxx_{}", s.chars(HEX, 32)),
                format!("xshpat_{}", s.chars(HEX, 32)),
            ]
        },
    ),
    uuid_row!("squarespace-access-token", "squarespace-token", &["squarespace"], "squarespace"),
    // Plaid: access tokens name their environment; client ids (24) and secrets (30) have
    // no prefix.
    regex!(
        "plaid-access-token",
        "plaid-token",
        &["access-sandbox-", "access-development-", "access-production-"],
        r"(access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:[^A-Za-z0-9_-]|\z)",
        |s| {
            let env = s.pick(&["sandbox", "development", "production"]);
            Sample::token(format!("access-{env}-{}", uuid(s, HEX)))
        },
        |s| {
            vec![
                format!("access-staging-{}", uuid(s, HEX)),
                format!("access-sandbox-{}", &uuid(s, HEX)[1..]),
                format!("access-sandbox-{}", uuid(s, LOWER)),
                format!("xaccess-sandbox-{}", uuid(s, HEX)),
            ]
        },
    ),
    context("plaid-client-id", "plaid-client-id", &["plaid"], "[a-z0-9]{24}", LOWER_DIGITS, (24, 24)),
    context("plaid-secret", "plaid-secret", &["plaid"], "[a-z0-9]{30}", LOWER_DIGITS, (30, 30)),
    // GoCardless: `live_` and 40 characters, after the name (`live_` alone is too common).
    context_written!(
        "gocardless-api-token",
        "gocardless-token",
        &["gocardless"],
        "live_[a-z0-9=_-]{40}",
        |s| {
            let v = format!("live_{}", s.mixed(B64URL, 40));
            context_assignment("gocardless", v, s)
        },
        |s| named_misses("gocardless", &[format!("live_{}", s.mixed(B62, 39)), format!("test_{}", s.mixed(B62, 40))]),
    ),
    // Flutterwave: `FLWSECK-…-X` and `FLWPUBK-…-X` (with `_TEST` in test mode), and the
    // encryption key, `FLWSECK` and 12 characters.
    regex!(
        "flutterwave-key",
        "flutterwave-key",
        &["FLWSECK", "FLWPUBK"],
        r"(FLW(?:SECK|PUBK)(?:_TEST)?-?(?:[A-Za-z0-9]{32}-X|[A-Za-z0-9]{12}))(?:[^A-Za-z0-9_-]|\z)",
        |s| {
            let token = match s.below(3) {
                0 => format!("FLWSECK_TEST-{}", s.mixed(HEX, 12)),
                1 => format!("FLWPUBK_TEST-{}-X", s.mixed(HEX, 32)),
                _ => format!("FLWSECK-{}-X", s.mixed(HEX, 32)),
            };
            Sample::token(token)
        },
        |s| {
            vec![
                format!("FLWSECK_TEST-{}", s.mixed(HEX, 11)),
                format!("FLWSECK_TEST-{}-X", s.mixed(HEX, 31)),
                format!("FLWSECX_TEST-{}-X", s.mixed(HEX, 32)),
                format!("xFLWSECK_TEST-{}-X", s.mixed(HEX, 32)),
            ]
        },
    ),
    context("coinbase-access-token", "coinbase-token", &["coinbase"], "[a-z0-9_-]{64}", B64URL, (64, 64)),
    context("kraken-access-token", "kraken-token", &["kraken"], "[a-z0-9/=_+-]{80,90}", B64_ANY, (80, 90)),
    context("kucoin-access-token", "kucoin-token", &["kucoin"], "[a-f0-9]{24}", HEX, (24, 24)),
    uuid_row!("kucoin-secret-key", "kucoin-token", &["kucoin"], "kucoin"),
    // Bittrex API keys and secrets: both 32 alphanumerics.
    context("bittrex-key", "bittrex-key", &["bittrex"], "[a-z0-9]{32}", B62, (32, 32)),
    context("finicity-api-token", "finicity-token", &["finicity"], "[a-f0-9]{32}", HEX, (32, 32)),
    context("finicity-client-secret", "finicity-token", &["finicity"], "[a-z0-9]{20}", B62, (20, 20)),
    context("finnhub-access-token", "finnhub-token", &["finnhub"], "[a-z0-9]{20}", LOWER_DIGITS, (20, 20)),
    // ---- Shipping and commerce ----
    regex!(
        "duffel-api-token",
        "duffel-token",
        &["duffel_"],
        r"(duffel_(?:test|live)_[A-Za-z0-9_=-]{43})(?:[^A-Za-z0-9_=-]|\z)",
        |s| Sample::token(format!("duffel_{}_{}", s.pick(&["test", "live"]), s.mixed(B64URL, 43))),
        |s| {
            vec![
                format!("duffel_live_{}", s.mixed(B62, 42)),
                format!("duffel_live_{}", s.mixed(B62, 44)),
                format!("duffel_prod_{}", s.mixed(B62, 43)),
                format!("xduffel_live_{}", s.mixed(B62, 43)),
            ]
        },
    ),
    // EasyPost: production `EZAK…` and test `EZTK…` keys, 54 alphanumerics.
    Format {
        entropy: Some(3.0),
        ..regex!(
            "easypost-api-token",
            "easypost-token",
            &["EZAK", "EZTK"],
            r"((?:EZAK|EZTK)[A-Za-z0-9]{54})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("{}{}", s.pick(&["EZAK", "EZTK"]), s.mixed(B62, 54))),
            |s| {
                vec![
                    format!("EZAK{}", s.mixed(B62, 53)),
                    format!("EZAK{}", s.mixed(B62, 55)),
                    format!("EZXK{}", s.mixed(B62, 54)),
                    format!("xEZAK{}", s.mixed(B62, 54)),
                ]
            },
        )
    },
    regex!(
        "shippo-api-token",
        "shippo-token",
        &["shippo_"],
        r"(shippo_(?:live|test)_[a-fA-F0-9]{40})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("shippo_{}_{}", s.pick(&["live", "test"]), s.chars(HEX, 40))),
        |s| {
            vec![
                format!("shippo_live_{}", s.chars(HEX, 39)),
                format!("shippo_live_{}", s.chars(HEX, 41)),
                format!("shippo_live_{}", s.chars(LOWER, 40)),
                format!("shippo_prod_{}", s.chars(HEX, 40)),
                format!("xshippo_live_{}", s.chars(HEX, 40)),
            ]
        },
    ),
    // Lob: `live_`/`test_` and 35 hex digits, publishable keys `live_pub_`/`test_pub_` and 31.
    context_written!(
        "lob-api-key",
        "lob-api-key",
        &["lob"],
        "(?:live|test)_(?:pub_[a-f0-9]{31}|[a-f0-9]{35})",
        |s| {
            let env = s.pick(&["live", "test"]);
            let v = if s.below(2) == 0 {
                format!("{env}_{}", s.chars(HEX, 35))
            } else {
                format!("{env}_pub_{}", s.chars(HEX, 31))
            };
            context_assignment("lob", v, s)
        },
        |s| named_misses("lob", &[format!("live_{}", s.chars(HEX, 34)), format!("live_pub_{}", s.chars(HEX, 32))]),
    ),
    context("etsy-access-token", "etsy-token", &["etsy"], "[a-z0-9]{24}", LOWER_DIGITS, (24, 24)),
    // MaxMind license keys: `XXXXXX_` + 29 letters or digits + `_mmk`.
    shape!(
        "maxmind-license-key",
        "maxmind-key",
        &["_mmk"],
        Shape::MaxMind,
        |s| Sample::token(format!("{}_{}_mmk", s.mixed(B62, 6), s.mixed(B62, 29))),
        |s| {
            vec![
                format!("{}_{}_mmk", s.mixed(B62, 6), s.mixed(B62, 28)),
                format!("{}-{}_mmk", s.mixed(B62, 6), s.mixed(B62, 29)),
                format!("x{}_{}_mmk", s.mixed(B62, 6), s.mixed(B62, 29)),
                format!("{}_{}_mmkx", s.mixed(B62, 6), s.mixed(B62, 29)),
            ]
        },
    ),
    // ---- Messaging and e-mail ----
    // Twilio API key SIDs: `SK` and 32 hex digits (either case). `SK` alone is too short a
    // keyword for the prefilter, so each hex digit after it makes one.
    regex!(
        "twilio-api-key",
        "twilio-key",
        &[
            "SK0", "SK1", "SK2", "SK3", "SK4", "SK5", "SK6", "SK7", "SK8", "SK9", "SKa", "SKb", "SKc", "SKd", "SKe",
            "SKf", "SKA", "SKB", "SKC", "SKD", "SKE", "SKF",
        ],
        r"(SK[0-9a-fA-F]{32})(?:[^A-Za-z0-9_]|\z)",
        |s| Sample::token(format!("SK{}", s.chars(HEX, 32))),
        |s| {
            vec![
                format!("SK{}", s.chars(HEX, 31)),
                format!("SK{}", s.chars(HEX, 33)),
                format!("TASK{}", s.chars(HEX, 32)),
                format!("SK{}", s.chars(LOWER, 32)),
            ]
        },
    ),
    // FreshBooks access tokens: 64 lowercase letters and digits after the provider's name.
    context("freshbooks-access-token", "freshbooks-token", &["freshbooks"], "[a-z0-9]{64}", LOWER_DIGITS, (64, 64)),
    context("discord-api-token", "discord-secret", &["discord"], "[a-f0-9]{64}", HEX, (64, 64)),
    // Eighteen random digits often measure under 2.5 bits per byte.
    Format {
        entropy: Some(2.0),
        ..context("discord-client-id", "discord-client-id", &["discord"], "[0-9]{18}", DIGITS, (18, 18))
    },
    context("discord-client-secret", "discord-secret", &["discord"], "[a-z0-9=_-]{32}", B64URL, (32, 32)),
    // Telegram bot tokens: the bot's id, `:`, then `A` and 34 more (gitleaks' `telegr`
    // catches `telegram` and `telegraf`).
    context_written!(
        "telegram-bot-token",
        "telegram-bot-token",
        &["telegr"],
        "[0-9]{5,16}:(?-i:A)[a-z0-9_-]{34}",
        |s| {
            let v = format!("{}:A{}", s.chars(DIGITS, 10), s.mixed(B64URL, 34));
            context_assignment("telegram", v, s)
        },
        |s| {
            let id = s.chars(DIGITS, 10);
            named_misses("telegram", &[format!("{id}:A{}", s.mixed(B62, 33)), format!("{id}:a{}", s.mixed(B62, 34))])
        },
    ),
    // SendGrid: `SG.`, 22 characters, `.`, 43 characters.
    Format {
        entropy: Some(3.0),
        ..regex!(
            "sendgrid-api-token",
            "sendgrid-token",
            &["SG."],
            r"(SG\.[A-Za-z0-9=_.-]{66})(?:[^A-Za-z0-9=_.-]|\z)",
            |s| Sample::token(format!("SG.{}.{}", s.mixed(B64URL, 22), s.mixed(B64URL, 43))),
            |s| {
                vec![
                    format!("SG.{}.{}", s.mixed(B62, 22), s.mixed(B62, 42)),
                    format!("SG.{}.{}", s.mixed(B62, 22), s.mixed(B62, 44)),
                    format!("SH.{}.{}", s.mixed(B62, 22), s.mixed(B62, 43)),
                    format!("XSG.{}.{}", s.mixed(B62, 22), s.mixed(B62, 43)),
                ]
            },
        )
    },
    // Sendinblue (Brevo): API keys `xkeysib-`, SMTP keys `xsmtpsib-`: 64 hex, `-`, 16.
    regex!(
        "sendinblue-api-token",
        "sendinblue-token",
        &["xkeysib-", "xsmtpsib-"],
        r"(x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16})(?:[^A-Za-z0-9_-]|\z)",
        |s| {
            let prefix = s.pick(&["xkeysib-", "xsmtpsib-"]);
            Sample::token(format!("{prefix}{}-{}", s.chars(HEX, 64), s.mixed(B62, 16)))
        },
        |s| {
            vec![
                format!("xkeysib-{}-{}", s.chars(HEX, 63), s.mixed(B62, 16)),
                format!("xkeysib-{}-{}", s.chars(HEX, 64), s.mixed(B62, 15)),
                format!("xkeysib-{}-{}", s.chars(LOWER, 64), s.mixed(B62, 16)),
                format!("axkeysib-{}-{}", s.chars(HEX, 64), s.mixed(B62, 16)),
            ]
        },
    ),
    // Mailgun: private keys `key-…`, public validation keys `pubkey-…`, webhook signing keys.
    context_written!(
        "mailgun-key",
        "mailgun-key",
        &["mailgun"],
        "(?:pub)?key-[a-f0-9]{32}|[a-h0-9]{32}-[a-h0-9]{8}-[a-h0-9]{8}",
        |s| {
            let v = match s.below(3) {
                0 => format!("key-{}", s.chars(HEX, 32)),
                1 => format!("pubkey-{}", s.chars(HEX, 32)),
                _ => format!("{}-{}-{}", s.chars(HEX, 32), s.chars(HEX, 8), s.chars(HEX, 8)),
            };
            context_assignment("mailgun", v, s)
        },
        |s| named_misses("mailgun", &[format!("key-{}", s.chars(HEX, 31)), format!("privkey-{}", s.chars(LOWER, 32))]),
    ),
    // Mailchimp: 32 hex digits and the data centre, `-us6`; also as the argument of
    // `MailchimpSDK.initialize(…)`.
    with_names(
        "mailchimpsdk.initialize|mailchimp",
        context_written!(
            "mailchimp-api-key",
            "mailchimp-key",
            &["mailchimp"],
            "[a-f0-9]{32}-us[0-9]{1,2}",
            |s| {
                let v = format!("{}-us{}", s.chars(HEX, 32), 1 + s.below(20));
                context_assignment("mailchimp", v, s)
            },
            |s| named_misses("mailchimp", &[format!("{}-us1", s.chars(HEX, 31)), format!("{}-eu1", s.chars(HEX, 32))]),
        ),
    ),
    context(
        "messagebird-api-token",
        "messagebird-token",
        &["messagebird", "message-bird", "message_bird"],
        "[a-z0-9]{25}",
        B62,
        (25, 25),
    ),
    uuid_row!(
        "messagebird-client-id",
        "messagebird-token",
        &["messagebird", "message-bird", "message_bird"],
        "messagebird"
    ),
    // Microsoft Teams incoming webhooks: the path is the secret, the host stays readable.
    regex!(
        "microsoft-teams-webhook",
        "teams-webhook",
        &["webhook.office.com"],
        r"webhook\.office\.com/(webhookb2/[A-Za-z0-9]{8}-(?:[A-Za-z0-9]{4}-){3}[A-Za-z0-9]{12}@[A-Za-z0-9]{8}-(?:[A-Za-z0-9]{4}-){3}[A-Za-z0-9]{12}/IncomingWebhook/[A-Za-z0-9]{32}/[A-Za-z0-9]{8}-(?:[A-Za-z0-9]{4}-){3}[A-Za-z0-9]{12}(?:/[A-Za-z0-9_-]+)?)(?:[^A-Za-z0-9_/-]|\z)",
        |s| {
            let path = format!(
                "webhookb2/{}@{}/IncomingWebhook/{}/{}",
                uuid(s, HEX),
                uuid(s, HEX),
                s.chars(HEX, 32),
                uuid(s, HEX)
            );
            Sample::carried(path.clone(), format!("https://acme.webhook.office.com/{path}"))
        },
        |s| {
            vec![
                format!("https://acme.webhook.office.com/webhookb2/{}", uuid(s, HEX)),
                format!(
                    "https://acme.webhook.office.com/webhookb3/{}@{}/IncomingWebhook/{}/{}",
                    uuid(s, HEX),
                    uuid(s, HEX),
                    s.chars(HEX, 32),
                    uuid(s, HEX)
                ),
            ]
        },
    ),
    uuid_row!("sendbird-access-id", "sendbird-token", &["sendbird"], "sendbird"),
    context("sendbird-access-token", "sendbird-token", &["sendbird"], "[a-f0-9]{40}", HEX, (40, 40)),
    context("intercom-api-key", "intercom-token", &["intercom"], "[a-z0-9=_-]{60}", B64URL, (60, 60)),
    context("zendesk-secret-key", "zendesk-token", &["zendesk"], "[a-z0-9]{40}", B62, (40, 40)),
    context_written!(
        "hubspot-api-key",
        "hubspot-key",
        &["hubspot"],
        UUID_RE,
        |s| {
            let v = uuid(s, HEX_UPPER);
            context_assignment("hubspot", v, s)
        },
        |s| {
            let short = uuid(s, HEX_UPPER);
            named_misses("hubspot", &[short[1..].to_owned(), uuid(s, UPPER)])
        },
    ),
    // ---- Social networks ----
    // Facebook: page and user access tokens `EAA…`, 100 or more alphanumerics; app secrets
    // are 32 hex digits after the name.
    Format {
        entropy: Some(4.0),
        classes: Classes::UpperLowerDigit,
        max_len: Some(1024),
        ..regex!(
            "facebook-access-token",
            "facebook-token",
            &["EAA"],
            r"(EAA[A-Z][A-Za-z0-9]{100,})(?:[^A-Za-z0-9_-]|\z)",
            |s| {
                let len = 100 + s.below(100);
                Sample::token(format!("EAA{}{}", s.pick(&["M", "C", "B", "G"]), s.mixed(B62, len)))
            },
            |s| {
                vec![
                    format!("EAAM{}", s.mixed(B62, 99)),
                    format!("EAAM{}", s.chars(LOWER, 120)),
                    format!("EABM{}", s.mixed(B62, 120)),
                    format!("xEAAM{}", s.mixed(B62, 120)),
                ]
            },
        )
    },
    context("facebook-secret", "facebook-secret", &["facebook"], "[a-f0-9]{32}", HEX, (32, 32)),
    // Twitter (X): API keys (25), API secrets (50), access-token secrets (45) after the
    // name; access tokens are the user id, `-`, and 20 to 40 more; bearer tokens start with
    // 22 `A`s.
    context("twitter-api-key", "twitter-token", &["twitter"], "[a-z0-9]{25}", B62, (25, 25)),
    context("twitter-access-secret", "twitter-token", &["twitter"], "[a-z0-9]{45}", B62, (45, 45)),
    context("twitter-api-secret", "twitter-token", &["twitter"], "[a-z0-9]{50}", B62, (50, 50)),
    context_written!(
        "twitter-access-token",
        "twitter-token",
        &["twitter"],
        "[0-9]{15,25}-[a-z0-9]{20,40}",
        |s| {
            let len = 20 + s.below(21);
            let v = format!("{}-{}", s.chars(DIGITS, 19), s.mixed(B62, len));
            context_assignment("twitter", v, s)
        },
        |s| {
            named_misses(
                "twitter",
                &[
                    format!("{}-{}", s.chars(DIGITS, 14), s.mixed(B62, 30)),
                    format!("{}-{}", s.chars(DIGITS, 19), s.mixed(B62, 19)),
                ],
            )
        },
    ),
    context_written!(
        "twitter-bearer-token",
        "twitter-token",
        &["twitter"],
        "A{22}[a-z0-9%]{80,100}",
        |s| {
            let len = 80 + s.below(21);
            let v = format!("{}{}", "A".repeat(22), s.mixed(B62, len));
            context_assignment("twitter", v, s)
        },
        |s| {
            named_misses(
                "twitter",
                &[
                    format!("{}{}", "A".repeat(22), s.mixed(B62, 79)),
                    format!("{}b{}", "A".repeat(21), s.mixed(B62, 89)),
                ],
            )
        },
    ),
    context(
        "linkedin-client-id",
        "linkedin-token",
        &["linkedin", "linked_in", "linked-in"],
        "[a-z0-9]{14}",
        B62,
        (14, 14),
    ),
    context(
        "linkedin-client-secret",
        "linkedin-token",
        &["linkedin", "linked_in", "linked-in"],
        "[a-z0-9]{16}",
        B62,
        (16, 16),
    ),
    context("twitch-api-token", "twitch-token", &["twitch"], "[a-z0-9]{30}", LOWER_DIGITS, (30, 30)),
    context("flickr-access-token", "flickr-token", &["flickr"], "[a-z0-9]{32}", LOWER_DIGITS, (32, 32)),
    // `new-york-times,` as gitleaks spells it: the comma would otherwise be read as the
    // assignment.
    context(
        "nytimes-access-token",
        "nytimes-token",
        &["nytimes", "new-york-times,", "new-york-times", "newyorktimes"],
        "[a-z0-9=_-]{32}",
        B64URL,
        (32, 32),
    ),
    // ---- Other SaaS ----
    // Dropbox: legacy app keys (15), long-lived tokens (11, ten `A`s, 43), short-lived `sl.`.
    context("dropbox-api-token", "dropbox-token", &["dropbox"], "[a-z0-9]{15}", B62, (15, 15)),
    context_written!(
        "dropbox-long-lived-token",
        "dropbox-token",
        &["dropbox"],
        "[a-z0-9]{11}AAAAAAAAAA[a-z0-9=_-]{43}",
        |s| {
            let v = format!("{}AAAAAAAAAA{}", s.mixed(B62, 11), s.mixed(B64URL, 43));
            context_assignment("dropbox", v, s)
        },
        |s| named_misses("dropbox", &[format!("{}AAAAAAAAA{}", s.mixed(B62, 11), s.mixed(B62, 43))]),
    ),
    context_written!(
        "dropbox-short-lived-token",
        "dropbox-token",
        &["dropbox"],
        r"sl\.[a-z0-9=_-]{130,1000}",
        |s| {
            let len = 130 + s.below(40);
            let v = format!("sl.{}", s.mixed(B64URL, len));
            context_assignment("dropbox", v, s)
        },
        |s| named_misses("dropbox", &[format!("sl.{}", s.mixed(B62, 129)), format!("sl:{}", s.mixed(B62, 135))]),
    ),
    // A JWT base64-encoded again (`eyJ` is `ZXlK`), as in Kubernetes secrets; `\/` when
    // JSON-escaped, `\r` where it was wrapped.
    Format {
        entropy: Some(3.5),
        ..regex!(
            "jwt-base64",
            "jwt",
            &["ZXlK"],
            r"(ZXlK[A-Za-z0-9+/_\\\r-]{40,}={0,2})(?:[^A-Za-z0-9+/_=\\-]|\z)",
            |s| Sample::token(format!("ZXlK{}", s.mixed(B64, 120))),
            |s| {
                vec![
                    format!("ZXlK{}", s.mixed(B64, 39)),
                    format!("ZXlL{}", s.mixed(B64, 120)),
                    format!("xZXlK{}", s.mixed(B64, 120)),
                    format!("ZXlK{}", "ab".repeat(30)),
                ]
            },
        )
    },
];
