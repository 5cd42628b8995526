//! Cloud and infrastructure providers: AWS, GCP, Azure, Alibaba, DigitalOcean, Cloudflare,
//! HashiCorp, Pulumi, 1Password, age and their peers; database connection strings.
//!
//! Database URLs (`postgres://user:pass@host`, `mongodb+srv://…`, `rediss://:pass@…`) and GCP
//! service-account JSON keys (a PEM block with `\n` escapes inside a JSON string) need no row
//! here: the structural `url-credentials` and `private-key` rows mask them (tests below).

use super::*;

/// The bech32 alphabet, upper case (age secret keys).
#[cfg(test)]
const BECH32_UPPER: &str = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";
/// `[A-Za-z0-9_=.-]` (PlanetScale).
#[cfg(test)]
const WORD_DOT_EQ: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_=.-";

#[cfg(test)]
fn uuid(s: &mut Seed) -> String {
    format!("{}-{}-{}-{}-{}", s.chars(HEX, 8), s.chars(HEX, 4), s.chars(HEX, 4), s.chars(HEX, 4), s.chars(HEX, 12))
}

pub(super) static ROWS: &[Format] = &[
    // Amazon Bedrock API keys. Long-lived: `ABSK` + base64 of `BedrockAPIKey-…`.
    Format {
        entropy: Some(3.0),
        ..regex!(
            "aws-bedrock-api-key",
            "aws-bedrock-key",
            &["ABSK"],
            r"(ABSK[A-Za-z0-9+/]{109,269}={0,2})(?:[^A-Za-z0-9+/=]|\z)",
            |s| Sample::token(format!("ABSKQmVkcm9ja0FQSUtleS1{}=", s.mixed(B62, 108))),
            |s| {
                vec![
                    format!("ABSKQmVkcm9ja0FQSUtleS1{}", s.mixed(B62, 80)),
                    format!("ABSKQmVkcm9ja0FQSUtleS1{}", s.mixed(B62, 260)),
                    format!("ABSLQmVkcm9ja0FQSUtleS1{}=", s.mixed(B62, 108)),
                    format!("xABSKQmVkcm9ja0FQSUtleS1{}=", s.mixed(B62, 108)),
                ]
            },
        )
    },
    // Short-lived: `bedrock-api-key-` + base64 of a presigned `bedrock.amazonaws.com/?Action=…`.
    Format {
        max_len: Some(8000),
        ..regex!(
            "aws-bedrock-short-lived-key",
            "aws-bedrock-key",
            &["bedrock-api-key-"],
            r"(bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=]*)(?:[^A-Za-z0-9+/=]|\z)",
            |s| Sample::token(format!("bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29tLz9BY3Rpb2{}", s.mixed(B64, 600))),
            |s| {
                vec![
                    format!("bedrock-api-key-{}", s.mixed(B62, 40)),
                    "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29".to_owned(),
                    format!("mybedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t{}", s.mixed(B62, 40)),
                ]
            },
        )
    },
    // Alibaba Cloud AccessKey ids: `LTAI` + 12 (older) to 20 letters and digits.
    Format {
        entropy: Some(3.0),
        ..regex!(
            "alibaba-access-key-id",
            "alibaba-access-key",
            &["LTAI"],
            r"(LTAI[A-Za-z0-9]{12,20})(?:[^A-Za-z0-9_-]|\z)",
            |s| {
                let len = if s.below(3) == 0 { 12 } else { 20 };
                Sample::token(format!("LTAI{}", s.mixed(B62, len)))
            },
            |s| {
                vec![
                    format!("LTAI{}", s.mixed(B62, 11)),
                    format!("LTAI{}", s.mixed(B62, 21)),
                    format!("LTAJ{}", s.mixed(B62, 20)),
                    format!("XLTAI{}", s.mixed(B62, 20)),
                    format!("LTAI{}-{}", s.mixed(B62, 10), s.mixed(B62, 10)),
                ]
            },
        )
    },
    // AccessKey secrets have no prefix: 30 letters and digits after the provider's name.
    context("alibaba-secret-key", "alibaba-secret-key", &["alibaba"], "[a-z0-9]{30}", B62, (30, 30)),
    // Azure AD (Entra ID) client secrets: three characters, a digit, `Q~`, then 31 to 34
    // more. A row cannot look behind its keyword, so the mask starts after `Q~` and the
    // first three characters stay (18 bits of the secret's 200 or so).
    Format {
        entropy: Some(3.0),
        ..regex!(
            "azure-ad-client-secret",
            "azure-client-secret",
            &["0Q~", "1Q~", "2Q~", "3Q~", "4Q~", "5Q~", "6Q~", "7Q~", "8Q~", "9Q~"],
            r"[0-9]Q~([A-Za-z0-9_~.-]{31,34})(?:[^A-Za-z0-9_~.-]|\z)",
            |s| {
                let rest = s.mixed(&format!("{B62}_~.-"), 34);
                let head = format!("{}{}Q~", s.mixed(B62, 3), s.chars(DIGITS, 1));
                Sample::carried(rest.clone(), format!("{head}{rest}"))
            },
            |s| {
                vec![
                    format!("{}8Q~{}", s.mixed(B62, 3), s.mixed(B62, 30)),
                    format!("{}8Q~{}", s.mixed(B62, 3), s.mixed(B62, 35)),
                    format!("{}8R~{}", s.mixed(B62, 3), s.mixed(B62, 34)),
                    format!("{}aQ~{}", s.mixed(B62, 3), s.mixed(B62, 34)),
                ]
            },
        )
    },
    // Azure storage account keys (64 bytes, base64) and Service Bus / Event Hubs shared
    // access keys (32 bytes) in connection strings.
    regex!(
        "azure-storage-account-key",
        "azure-storage-key",
        &["AccountKey=", "SharedAccessKey="],
        r"(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{86}==|[A-Za-z0-9+/]{43}=)(?:[^A-Za-z0-9+/=]|\z)",
        |s| {
            let (name, key) = if s.below(2) == 0 {
                ("AccountKey", s.mixed(B64, 86) + "==")
            } else {
                ("SharedAccessKey", s.mixed(B64, 43) + "=")
            };
            Sample::carried(key.clone(), format!("DefaultEndpointsProtocol=https;AccountName=acme;{name}={key};"))
        },
        |_| {
            vec![
                "AccountKey=${AZURE_STORAGE_KEY};".to_owned(),
                "AccountKey=<storage-account-key>;".to_owned(),
                "set AccountKey= in the connection string".to_owned(),
            ]
        },
    ),
    // The signature of an Azure SAS URL: base64 of an HMAC-SHA256, usually percent-encoded.
    regex!(
        "azure-sas-signature",
        "azure-sas-token",
        &["sig="],
        r"sig=((?:[A-Za-z0-9+/]|%2[BFbf]){43}(?:=|%3[Dd])?)(?:[^A-Za-z0-9%+/=]|\z)",
        |s| {
            let sig = format!("{}%2F{}%3D", s.mixed(B62, 20), s.mixed(B62, 22));
            let url = format!("https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&sr=b&sp=r&sig={sig}");
            Sample::carried(sig, url)
        },
        |s| {
            vec![
                format!("?sv=2022-11-02&sig={}", s.mixed(B62, 30)),
                format!("?sv=2022-11-02&sig={}", s.mixed(B62, 50)),
                "?sv=2022-11-02&sig=${SAS_SIGNATURE}".to_owned(),
            ]
        },
    ),
    // Cloudflare API tokens (40 characters) and the older global API key (37 hex digits) have
    // no prefix; Origin CA keys do.
    context("cloudflare-api-token", "cloudflare-api-key", &["cloudflare"], "[a-z0-9_-]{40}", B64URL, (40, 40)),
    context("cloudflare-global-api-key", "cloudflare-api-key", &["cloudflare"], "[a-f0-9]{37}", HEX, (37, 37)),
    regex!(
        "cloudflare-origin-ca-key",
        "cloudflare-api-key",
        &["v1.0-"],
        r"(v1\.0-[a-f0-9]{24}-[a-f0-9]{146})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("v1.0-{}-{}", s.chars(HEX, 24), s.chars(HEX, 146))),
        |s| {
            vec![
                format!("v1.0-{}-{}", s.chars(HEX, 24), s.chars(HEX, 145)),
                format!("v1.0-{}-{}", s.chars(HEX, 23), s.chars(HEX, 146)),
                format!("v1.1-{}-{}", s.chars(HEX, 24), s.chars(HEX, 146)),
                format!("v1.0-{}-{}", s.chars(HEX, 24), s.chars(UPPER, 146)),
                "see v1.0-beta for details".to_owned(),
            ]
        },
    ),
    // DigitalOcean OAuth access (`doo_`), personal access (`dop_`) and refresh (`dor_`) tokens.
    regex!(
        "digitalocean-token",
        "digitalocean-token",
        &["doo_v1_", "dop_v1_", "dor_v1_"],
        r"(do[opr]_v1_[a-f0-9]{64})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("{}_v1_{}", s.pick(&["doo", "dop", "dor"]), s.chars(HEX, 64))),
        |s| {
            vec![
                format!("dop_v1_{}", s.chars(HEX, 63)),
                format!("dop_v1_{}", s.chars(HEX, 65)),
                format!("dox_v1_{}", s.chars(HEX, 64)),
                format!("dop_v1_{}", s.mixed(B62, 64)),
                format!("xdop_v1_{}", s.chars(HEX, 64)),
            ]
        },
    ),
    // Heroku API keys: a UUID after the name; the newer `HRKU-AA…` tokens carry a prefix.
    context_written!(
        "heroku-api-key",
        "heroku-api-key",
        &["heroku"],
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        |s| {
            let value = uuid(s);
            context_assignment("heroku", value, s)
        },
        |s| {
            vec![
                "deploy to heroku: see the docs".to_owned(),
                format!("heroku_app_id = \"{}\"", s.chars(HEX, 32)),
                format!("heroku_app = \"{}-{}\"", s.chars(HEX, 8), s.chars(HEX, 20)),
                "heroku_api_key = \"${HEROKU_API_KEY}\"".to_owned(),
            ]
        },
    ),
    regex!(
        "heroku-api-key-v2",
        "heroku-api-key",
        &["HRKU-AA"],
        r"(HRKU-AA[A-Za-z0-9_-]{58})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("HRKU-AA{}", s.mixed(B64URL, 58))),
        |s| {
            vec![
                format!("HRKU-AA{}", s.mixed(B62, 57)),
                format!("HRKU-AA{}", s.mixed(B62, 59)),
                format!("HRKU-AB{}", s.mixed(B62, 58)),
                format!("XHRKU-AA{}", s.mixed(B62, 58)),
            ]
        },
    ),
    // Fly.io: `fo1_` OAuth tokens, `fm1a_`/`fm1r_`/`fm2_` macaroons (base64, often `FlyV1 …`).
    Format {
        entropy: Some(3.5),
        ..regex!(
            "flyio-token",
            "flyio-token",
            &["fo1_", "fm1", "fm2_"],
            r"(fo1_[A-Za-z0-9_-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})(?:[^A-Za-z0-9_+/=-]|\z)",
            |s| {
                let token = match s.below(3) {
                    0 => format!("fo1_{}", s.mixed(B64URL, 43)),
                    1 => format!("fm1r_{}=", s.mixed(B64, 140)),
                    _ => format!("fm2_{}", s.mixed(B64, 300)),
                };
                Sample::token(token)
            },
            |s| {
                vec![
                    format!("fo1_{}", s.mixed(B62, 42)),
                    format!("fm2_{}", s.mixed(B62, 99)),
                    format!("fm3_{}", s.mixed(B62, 150)),
                    format!("xfm2_{}", s.mixed(B62, 150)),
                ]
            },
        )
    },
    context("netlify-access-token", "netlify-token", &["netlify"], "[a-z0-9=_-]{40,46}", B64URL, (40, 46)),
    // Yandex Cloud: IAM tokens (`t1.…`), API keys (`AQVN…`), static access keys (`YC…`,
    // prefix-less enough to need the name).
    Format {
        entropy: Some(3.5),
        ..regex!(
            "yandex-iam-token",
            "yandex-token",
            &["t1."],
            r"(t1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}={0,2})(?:[^A-Za-z0-9_=-]|\z)",
            |s| Sample::token(format!("t1.{}.{}", s.mixed(B64URL, 180), s.mixed(B64URL, 86))),
            |s| {
                vec![
                    format!("t1.{}.{}", s.mixed(B62, 40), s.mixed(B62, 85)),
                    format!("t2.{}.{}", s.mixed(B62, 40), s.mixed(B62, 86)),
                    format!("at1.{}.{}", s.mixed(B62, 40), s.mixed(B62, 86)),
                    "let t1.x = t1.y".to_owned(),
                ]
            },
        )
    },
    regex!(
        "yandex-api-key",
        "yandex-token",
        &["AQVN"],
        r"(AQVN[A-Za-z0-9_-]{35,38})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("AQVN{}", s.mixed(B64URL, 36))),
        |s| {
            vec![
                format!("AQVN{}", s.mixed(B62, 34)),
                format!("AQVN{}", s.mixed(B62, 39)),
                format!("AQVM{}", s.mixed(B62, 36)),
                format!("xAQVN{}", s.mixed(B62, 36)),
            ]
        },
    ),
    context_written!(
        "yandex-aws-access-token",
        "yandex-token",
        &["yandex"],
        "YC[a-z0-9_-]{38}",
        |s| {
            let value = format!("YC{}", s.mixed(B64URL, 38));
            context_assignment("yandex", value, s)
        },
        |s| {
            vec![
                "yandex cloud docs".to_owned(),
                format!("yandex_id = \"YC{}\"", s.mixed(B62, 37)),
                format!("yandex_id = \"YC{}\"", s.mixed(B62, 39)),
                format!("yandex_id = \"XC{}\"", s.mixed(B62, 38)),
            ]
        },
    ),
    regex!(
        "scalingo-api-token",
        "scalingo-token",
        &["tk-us-"],
        r"(tk-us-[A-Za-z0-9_-]{48})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("tk-us-{}", s.mixed(B64URL, 48))),
        |s| {
            vec![
                format!("tk-us-{}", s.mixed(B62, 47)),
                format!("tk-us-{}", s.mixed(B62, 49)),
                format!("tk-eu-{}", s.mixed(B62, 48)),
                format!("xtk-us-{}", s.mixed(B62, 48)),
            ]
        },
    ),
    Format {
        entropy: Some(3.5),
        ..regex!(
            "openshift-user-token",
            "openshift-token",
            &["sha256~"],
            r"(sha256~[A-Za-z0-9_-]{43})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("sha256~{}", s.mixed(B64URL, 43))),
            |s| {
                vec![
                    format!("sha256~{}", s.mixed(B62, 42)),
                    format!("sha256~{}", s.mixed(B62, 44)),
                    format!("sha512~{}", s.mixed(B62, 43)),
                    format!("xsha256~{}", s.mixed(B62, 43)),
                ]
            },
        )
    },
    // Terraform Cloud / Enterprise API tokens: `<14-character id>.atlasv1.<60 to 70>`. The id
    // is not the secret; the mask starts after `.atlasv1.`.
    Format {
        entropy: Some(3.5),
        ..regex!(
            "hashicorp-tf-api-token",
            "terraform-token",
            &[".atlasv1."],
            r"\.atlasv1\.([A-Za-z0-9_=-]{60,70})(?:[^A-Za-z0-9_=-]|\z)",
            |s| {
                let secret = s.mixed(B64URL, 64);
                Sample::carried(secret.clone(), format!("{}.atlasv1.{secret}", s.mixed(LOWER_DIGITS, 14)))
            },
            |s| {
                vec![
                    format!("{}.atlasv1.{}", s.mixed(LOWER_DIGITS, 14), s.mixed(B62, 59)),
                    format!("{}.atlasv1.{}", s.mixed(LOWER_DIGITS, 14), s.mixed(B62, 71)),
                    format!("{}.atlasv2.{}", s.mixed(LOWER_DIGITS, 14), s.mixed(B62, 64)),
                ]
            },
        )
    },
    // `password = "…"` in Terraform (`administrator_login_password`): a quoted literal of 8 to
    // 20 characters with a digit, `=` or `-` (an identifier such as `new_password` has none).
    Format {
        max_len: Some(20),
        any_case: true,
        entropy: Some(2.5),
        window: Some(CONTEXT_WINDOW),
        ..regex!(
            "hashicorp-tf-password",
            "password",
            &["password"],
            // A context row's regex (`context_regex`), with the value required in quotes.
            r#"(?i)password[0-9a-z_.\t -]{0,24}?[\s'"`\]]{0,3}(?:=|:{1,3}=?|=>|\?=|\|\|:?|<-|<=|>|,)[\s'"`=]{0,5}"([a-z_]{0,19}[0-9=-][a-z0-9=_-]{0,19})"(?:[\s'"`;,)\]}<&]|\\[nrt]|\z)"#,
            |s| {
                let value = format!("{}{}", s.mixed(LOWER_DIGITS, 11), s.chars(DIGITS, 1));
                let text = match s.below(3) {
                    0 => format!("  administrator_login_password = \"{value}\""),
                    1 => format!("password = \"{value}\""),
                    _ => format!("\"password\": \"{value}\","),
                };
                Sample::carried(value, text)
            },
            |_| {
                vec![
                    "password = \"${var.db_password}\"".to_owned(),
                    "administrator_login_password = var.admin_password".to_owned(),
                    "let password: String = read_password()?;".to_owned(),
                    "password = \"ab1cd\"".to_owned(),
                    "the password is required".to_owned(),
                ]
            },
        )
    },
    // HashiCorp Vault service (`hvs.`) and batch (`hvb.`) tokens, Vault 1.10 and later.
    Format {
        entropy: Some(3.5),
        ..regex!(
            "vault-service-token",
            "vault-token",
            &["hvs."],
            r"(hvs\.[A-Za-z0-9_-]{90,120})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("hvs.CAESI{}", s.mixed(B64URL, 90))),
            |s| {
                vec![
                    format!("hvs.{}", s.mixed(B62, 89)),
                    format!("hvs.{}", s.mixed(B62, 121)),
                    format!("hvx.{}", s.mixed(B62, 95)),
                    format!("xhvs.{}", s.mixed(B62, 95)),
                ]
            },
        )
    },
    Format {
        entropy: Some(4.0),
        ..regex!(
            "vault-batch-token",
            "vault-token",
            &["hvb."],
            r"(hvb\.[A-Za-z0-9_-]{138,300})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("hvb.AAAAAQ{}", s.mixed(B64URL, 170))),
            |s| {
                vec![
                    format!("hvb.{}", s.mixed(B62, 137)),
                    format!("hvb.{}", s.mixed(B62, 301)),
                    format!("xhvb.{}", s.mixed(B62, 170)),
                ]
            },
        )
    },
    regex!(
        "pulumi-api-token",
        "pulumi-token",
        &["pul-"],
        r"(pul-[a-f0-9]{40})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("pul-{}", s.chars(HEX, 40))),
        |s| {
            vec![
                format!("pul-{}", s.chars(HEX, 39)),
                format!("pul-{}", s.chars(HEX, 41)),
                format!("pul-{}", s.chars(UPPER, 40)),
                format!("xpul-{}", s.chars(HEX, 40)),
            ]
        },
    ),
    // 1Password account secret keys (`A3-` + six groups) and service-account tokens.
    Format {
        entropy: Some(3.8),
        ..regex!(
            "1password-secret-key",
            "1password-secret-key",
            &["A3-"],
            r"(A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})(?:[^A-Za-z0-9_-]|\z)",
            |s| {
                let middle = if s.below(2) == 0 {
                    s.chars(UPPER_DIGITS, 11)
                } else {
                    format!("{}-{}", s.chars(UPPER_DIGITS, 6), s.chars(UPPER_DIGITS, 5))
                };
                let tail: Vec<String> = (0..3).map(|_| s.chars(UPPER_DIGITS, 5)).collect();
                Sample::token(format!("A3-{}-{middle}-{}", s.chars(UPPER_DIGITS, 6), tail.join("-")))
            },
            |s| {
                vec![
                    format!(
                        "A3-{}-{}-{}",
                        s.chars(UPPER_DIGITS, 6),
                        s.chars(UPPER_DIGITS, 11),
                        s.chars(UPPER_DIGITS, 5)
                    ),
                    format!(
                        "A4-{}-{}-{}-{}-{}",
                        s.chars(UPPER_DIGITS, 6),
                        s.chars(UPPER_DIGITS, 11),
                        s.chars(UPPER_DIGITS, 5),
                        s.chars(UPPER_DIGITS, 5),
                        s.chars(UPPER_DIGITS, 5)
                    ),
                    format!(
                        "A3-{}-{}-{}-{}-{}",
                        s.chars(LOWER, 6),
                        s.chars(LOWER, 11),
                        s.chars(LOWER, 5),
                        s.chars(LOWER, 5),
                        s.chars(LOWER, 5)
                    ),
                    "A3-AAAAAA-AAAAAAAAAAA-AAAAA-AAAAA-AAAAA".to_owned(),
                ]
            },
        )
    },
    Format {
        entropy: Some(4.0),
        ..regex!(
            "1password-service-account-token",
            "1password-token",
            &["ops_eyJ"],
            r"(ops_eyJ[A-Za-z0-9+/]{250,}={0,3})(?:[^A-Za-z0-9+/=]|\z)",
            |s| Sample::token(format!("ops_eyJ{}", s.mixed(B64, 300))),
            |s| {
                vec![
                    format!("ops_eyJ{}", s.mixed(B62, 249)),
                    format!("ops_eyK{}", s.mixed(B62, 300)),
                    format!("xops_eyJ{}", s.mixed(B62, 300)),
                ]
            },
        )
    },
    // age X25519 identities: bech32, upper case.
    regex!(
        "age-secret-key",
        "age-secret-key",
        &["AGE-SECRET-KEY-1"],
        r"(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("AGE-SECRET-KEY-1{}", s.chars(BECH32_UPPER, 58))),
        |s| {
            vec![
                format!("AGE-SECRET-KEY-1{}", s.chars(BECH32_UPPER, 57)),
                format!("AGE-SECRET-KEY-1{}", s.chars(BECH32_UPPER, 59)),
                format!("AGE-SECRET-KEY-1{}B", s.chars(BECH32_UPPER, 57)),
                format!("XAGE-SECRET-KEY-1{}", s.chars(BECH32_UPPER, 58)),
            ]
        },
    ),
    // Okta API tokens: `00` + 40 characters after the name.
    Format {
        entropy: Some(3.5),
        ..context_written!(
            "okta-access-token",
            "okta-token",
            &["okta"],
            "00[a-z0-9_=-]{40}",
            |s| {
                let value = format!("00{}", s.mixed(B64URL, 40));
                context_assignment("okta", value, s)
            },
            |s| {
                vec![
                    "okta sign-in page".to_owned(),
                    format!("okta_id = \"00{}\"", s.mixed(B62, 39)),
                    format!("okta_id = \"00{}\"", s.mixed(B62, 41)),
                    format!("okta_id = \"01{}\"", s.mixed(B62, 40)),
                ]
            },
        )
    },
    // Authress service-client access keys.
    regex!(
        "authress-service-client-access-key",
        "authress-key",
        &["sc_", "ext_", "scauth_", "authress_"],
        r"((?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120})(?:[^A-Za-z0-9+/_=-]|\z)",
        |s| {
            let prefix = s.pick(&["sc", "ext", "scauth", "authress"]);
            let (a, b, c, d) = (s.mixed(B62, 12), s.mixed(B62, 5), s.mixed(LOWER_DIGITS, 20), s.mixed(B64URL, 60));
            Sample::token(format!("{prefix}_{a}.{b}.acc_{c}.{d}"))
        },
        |s| {
            vec![
                format!("sc_{}.{}.acc_{}.{}", s.mixed(B62, 12), s.mixed(B62, 5), s.mixed(B62, 20), s.mixed(B62, 29)),
                format!("sc_{}.{}.abc_{}.{}", s.mixed(B62, 12), s.mixed(B62, 5), s.mixed(B62, 20), s.mixed(B62, 60)),
                format!("ext_{}.{}", s.mixed(B62, 12), s.mixed(B62, 5)),
            ]
        },
    ),
    regex!(
        "defined-networking-api-token",
        "defined-networking-token",
        &["dnkey-"],
        r"(dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52})(?:[^A-Za-z0-9=_-]|\z)",
        |s| Sample::token(format!("dnkey-{}-{}", s.mixed(B62, 26), s.mixed(B62, 52))),
        |s| {
            vec![
                format!("dnkey-{}-{}", s.mixed(B62, 26), s.mixed(B62, 51)),
                format!("dnkey-{}", s.mixed(B62, 79)),
                format!("xdnkey-{}-{}", s.mixed(B62, 26), s.mixed(B62, 52)),
            ]
        },
    ),
    Format {
        entropy: Some(3.0),
        ..regex!(
            "infracost-api-token",
            "infracost-token",
            &["ico-"],
            r"(ico-[A-Za-z0-9]{32})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("ico-{}", s.mixed(B62, 32))),
            |s| {
                vec![
                    format!("ico-{}", s.mixed(B62, 31)),
                    format!("ico-{}", s.mixed(B62, 33)),
                    format!("favico-{}", s.mixed(B62, 32)),
                    format!("ico-{}", "a".repeat(32)),
                ]
            },
        )
    },
    // Harness personal (`pat.`) and service-account (`sat.`) tokens.
    regex!(
        "harness-api-key",
        "harness-token",
        &["pat.", "sat."],
        r"((?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20})(?:[^A-Za-z0-9_-]|\z)",
        |s| {
            let kind = s.pick(&["pat", "sat"]);
            Sample::token(format!("{kind}.{}.{}.{}", s.mixed(B64URL, 22), s.mixed(B62, 24), s.mixed(B62, 20)))
        },
        |s| {
            vec![
                format!("pat.{}.{}.{}", s.mixed(B62, 22), s.mixed(B62, 24), s.mixed(B62, 19)),
                format!("pat.{}.{}", s.mixed(B62, 22), s.mixed(B62, 24)),
                format!("compat.{}.{}.{}", s.mixed(B62, 22), s.mixed(B62, 24), s.mixed(B62, 20)),
            ]
        },
    ),
    Format {
        entropy: Some(3.0),
        ..regex!(
            "octopus-deploy-api-key",
            "octopus-deploy-key",
            &["API-"],
            r"(API-[A-Z0-9]{26})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("API-{}", s.mixed(UPPER_DIGITS, 26))),
            |s| {
                vec![
                    format!("API-{}", s.mixed(UPPER_DIGITS, 25)),
                    format!("API-{}", s.mixed(UPPER_DIGITS, 27)),
                    format!("API-{}", s.mixed(LOWER, 26)),
                    format!("XAPI-{}", s.mixed(UPPER_DIGITS, 26)),
                    "API-AAAAAAAAAAAAAAAAAAAAAAAAAA".to_owned(),
                ]
            },
        )
    },
    regex!(
        "prefect-api-token",
        "prefect-token",
        &["pnu_"],
        r"(pnu_[A-Za-z0-9]{36})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("pnu_{}", s.mixed(B62, 36))),
        |s| {
            vec![
                format!("pnu_{}", s.mixed(B62, 35)),
                format!("pnu_{}", s.mixed(B62, 37)),
                format!("pnx_{}", s.mixed(B62, 36)),
                format!("xpnu_{}", s.mixed(B62, 36)),
            ]
        },
    ),
    // PlanetScale service tokens, OAuth tokens and database passwords.
    Format {
        entropy: Some(3.0),
        ..regex!(
            "planetscale-token",
            "planetscale-token",
            &["pscale_"],
            r"(pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64})(?:[^A-Za-z0-9_=.-]|\z)",
            |s| {
                let kind = s.pick(&["tkn", "oauth", "pw"]);
                let len = 32 + s.below(33);
                Sample::token(format!("pscale_{kind}_{}", s.mixed(WORD_DOT_EQ, len)))
            },
            |s| {
                vec![
                    format!("pscale_tkn_{}", s.mixed(B62, 31)),
                    format!("pscale_tkn_{}", s.mixed(B62, 65)),
                    format!("pscale_key_{}", s.mixed(B62, 40)),
                    format!("xpscale_pw_{}", s.mixed(B62, 40)),
                ]
            },
        )
    },
    // ClickHouse Cloud API secret keys: `4b1d` + 38 letters and digits, mixed case (a hex
    // digest that happens to start with `4b1d` is not).
    Format {
        classes: Classes::UpperAndLower,
        ..regex!(
            "clickhouse-cloud-api-secret-key",
            "clickhouse-key",
            &["4b1d"],
            r"(4b1d[A-Za-z0-9]{38})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("4b1d{}", s.mixed(B62, 38))),
            |s| {
                vec![
                    format!("4b1d{}", s.mixed(B62, 37)),
                    format!("4b1d{}", s.mixed(B62, 39)),
                    format!("4b1d{}", s.chars(HEX, 38)),
                    format!("x4b1d{}", s.mixed(B62, 38)),
                ]
            },
        )
    },
    context("fastly-api-token", "fastly-token", &["fastly"], "[a-z0-9=_-]{32}", B64URL, (32, 32)),
    context("cisco-meraki-api-key", "meraki-api-key", &["meraki"], "[0-9a-f]{40}", HEX, (40, 40)),
    // SettleMint application, personal and service access tokens.
    Format {
        entropy: Some(3.0),
        ..regex!(
            "settlemint-token",
            "settlemint-token",
            &["sm_"],
            r"(sm_(?:aat|pat|sat)_[A-Za-z0-9]{16})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("sm_{}_{}", s.pick(&["aat", "pat", "sat"]), s.mixed(B62, 16))),
            |s| {
                vec![
                    format!("sm_pat_{}", s.mixed(B62, 15)),
                    format!("sm_pat_{}", s.mixed(B62, 17)),
                    format!("sm_xat_{}", s.mixed(B62, 16)),
                    format!("asm_pat_{}", s.mixed(B62, 16)),
                ]
            },
        )
    },
    // Sidekiq Enterprise / Pro credentials in Bundler's environment variables (`user:pass`,
    // hex); in a URL the `url-credentials` row masks them.
    context_written!(
        "sidekiq-secret",
        "sidekiq-secret",
        &["bundle_enterprise__contribsys__com", "bundle_gems__contribsys__com"],
        "[a-f0-9]{8}:[a-f0-9]{8}",
        |s| {
            let value = format!("{}:{}", s.chars(HEX, 8), s.chars(HEX, 8));
            let name = s.pick(&["BUNDLE_ENTERPRISE__CONTRIBSYS__COM", "BUNDLE_GEMS__CONTRIBSYS__COM"]);
            let text = if s.below(2) == 0 { format!("export {name}={value}") } else { format!("{name}: \"{value}\"") };
            Sample::carried(value, text)
        },
        |s| {
            vec![
                "BUNDLE_GEMS__CONTRIBSYS__COM=${SIDEKIQ_CREDS}".to_owned(),
                format!("BUNDLE_GEMS__CONTRIBSYS__COM={}:{}", s.chars(HEX, 8), s.chars(HEX, 7)),
                format!("BUNDLE_GEMS__CONTRIBSYS__COM={}", s.chars(HEX, 16)),
            ]
        },
    ),
    Format {
        entropy: Some(3.5),
        ..regex!(
            "dynatrace-api-token",
            "dynatrace-token",
            &["dt0c01."],
            r"(dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("dt0c01.{}.{}", s.mixed(UPPER_DIGITS, 24), s.mixed(UPPER_DIGITS, 64))),
            |s| {
                vec![
                    format!("dt0c01.{}.{}", s.mixed(UPPER_DIGITS, 24), s.mixed(UPPER_DIGITS, 63)),
                    format!("dt0c01.{}.{}", s.mixed(UPPER_DIGITS, 23), s.mixed(UPPER_DIGITS, 64)),
                    format!("dt0c02.{}.{}", s.mixed(UPPER_DIGITS, 24), s.mixed(UPPER_DIGITS, 64)),
                    format!("xdt0c01.{}.{}", s.mixed(UPPER_DIGITS, 24), s.mixed(UPPER_DIGITS, 64)),
                ]
            },
        )
    },
];

#[cfg(test)]
mod tests {
    use crate::redact::Redactor;

    use super::*;

    #[test]
    fn database_urls_lose_their_passwords() {
        let r = Redactor::default();
        let mut s = Seed::new(7);
        for scheme in ["postgres", "postgresql", "mysql", "mongodb", "mongodb+srv", "redis", "rediss", "amqp", "amqps"]
        {
            let pw = s.mixed(B62, 20);
            for text in [
                format!("{scheme}://app:{pw}@db.internal:5432/prod"),
                format!("DATABASE_URL=\"{scheme}://app:{pw}@db/prod?sslmode=require\""),
                format!("{scheme}://:{pw}@cache:6379/0"),
            ] {
                let out = r.redact(&text);
                assert!(!out.contains(&pw), "{text:?} -> {out:?}");
                assert!(out.contains("[REDACTED:url-credentials]"), "{out:?}");
            }
        }
    }

    /// The `private_key` of a GCP service-account JSON file is one JSON string: a PEM block
    /// with `\n` escapes, which the `private-key` row masks whole.
    #[test]
    fn gcp_service_account_keys_lose_their_private_key() {
        let r = Redactor::default();
        let mut s = Seed::new(3);
        let body: Vec<String> = (0..8).map(|_| s.mixed(B64, 64)).collect();
        let pem = format!("-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n", body.join("\\n"));
        let json = format!(
            "{{\"type\": \"service_account\", \"private_key_id\": \"{}\", \"private_key\": \"{pem}\", \"client_email\": \"ci@acme.iam.gserviceaccount.com\"}}",
            s.chars(HEX, 40)
        );
        for text in [json.clone(), format!("  \"private_key\": \"{pem}\",\n")] {
            let out = r.redact(&text);
            assert!(body.iter().all(|line| !out.contains(line.as_str())), "{out:?}");
            assert!(out.contains("[REDACTED:private-key]"), "{out:?}");
        }
        assert!(r.redact(&json).contains("ci@acme.iam.gserviceaccount.com"));
    }
}
