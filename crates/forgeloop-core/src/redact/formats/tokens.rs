//! Token formats with a prefix of their own: code hosts, the first cloud and AI providers.

use super::*;

pub(super) static ROWS: &[Format] = &[
    Format {
        max_len: Some(251),
        ..regex!(
            "github-classic-token",
            "github-token",
            &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
            r"(gh[pousr]_[A-Za-z0-9]{30,})(?:[^A-Za-z0-9]|\z)",
            |s| Sample::token(format!("{}{}", s.pick(&["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]), s.mixed(B62, 36))),
            |s| {
                vec![
                    format!("ghx_{}", s.mixed(B62, 36)),
                    format!("ghp_{}", s.mixed(B62, 29)),
                    format!("ghp_{}", s.mixed(B62, 252)),
                    format!("ghp_{}-{}", s.mixed(B62, 20), s.mixed(B62, 16)),
                    format!("xghp_{}", s.mixed(B62, 36)),
                ]
            },
        )
    },
    Format {
        max_len: Some(244),
        ..regex!(
            "github-fine-grained-token",
            "github-token",
            &["github_pat_"],
            r"(github_pat_[A-Za-z0-9_]{22,})(?:[^A-Za-z0-9_]|\z)",
            |s| Sample::token(format!("github_pat_{}_{}", s.mixed(B62, 22), s.mixed(B62, 59))),
            |s| {
                vec![
                    format!("github_pat_{}", s.mixed(B62, 21)),
                    format!("github_pad_{}_{}", s.mixed(B62, 22), s.mixed(B62, 59)),
                    format!("my_github_pat_{}_{}", s.mixed(B62, 22), s.mixed(B62, 59)),
                    format!("github_pat_{}-{}", s.mixed(B62, 12), s.mixed(B62, 40)),
                ]
            },
        )
    },
    Format {
        max_len: Some(247),
        ..regex!(
            "stripe-key",
            "stripe-key",
            &["sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"],
            r"([sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,})(?:[^A-Za-z0-9]|\z)",
            |s| {
                let prefix = s.pick(&["sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"]);
                let len = 10 + s.below(100);
                Sample::token(format!("{prefix}{}", s.mixed(B62, len)))
            },
            |s| {
                vec![
                    format!("sk_demo_{}", s.mixed(B62, 24)),
                    format!("sk_live_{}", s.mixed(B62, 9)),
                    format!("sk_live_{}/{}", s.mixed(B62, 6), s.mixed(B62, 20)),
                    format!("task_live_{}", s.mixed(B62, 24)),
                ]
            },
        )
    },
    Format {
        max_len: Some(249),
        ..regex!(
            "stripe-webhook-secret",
            "stripe-key",
            &["whsec_"],
            r"(whsec_[A-Za-z0-9]{24,})(?:[^A-Za-z0-9]|\z)",
            |s| Sample::token(format!("whsec_{}", s.mixed(B62, 32))),
            |s| {
                vec![
                    format!("whsec_{}", s.mixed(B62, 23)),
                    format!("whsek_{}", s.mixed(B62, 32)),
                    format!("xwhsec_{}", s.mixed(B62, 32)),
                ]
            },
        )
    },
    // Access key ids: `AKIA` (long-term), `ASIA` (STS temporary), `ABIA` (STS service bearer),
    // `ACCA` (context-specific), the older `A3T` + one character; 16 base-32 characters follow.
    Format {
        entropy: Some(3.0),
        ..regex!(
            "aws-access-key",
            "aws-access-key",
            &["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
            r"((?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16})(?:[^A-Za-z0-9_-]|\z)",
            |s| {
                let prefix = match s.below(6) {
                    5 => format!("A3T{}", s.chars(UPPER_DIGITS, 1)),
                    n => ["AKIA", "ASIA", "ABIA", "ACCA", "AKIA"][n].to_owned(),
                };
                Sample::token(format!("{prefix}{}", s.chars(AWS_ID, 16)))
            },
            |s| {
                vec![
                    format!("AKIA{}", s.chars(AWS_ID, 15)),
                    format!("AKIA{}", s.chars(AWS_ID, 17)),
                    format!("ABIA{}", s.chars(LOWER, 16)),
                    format!("AKIB{}", s.chars(AWS_ID, 16)),
                    format!("XAKIA{}", s.chars(AWS_ID, 16)),
                    format!("A3T{}", s.chars(AWS_ID, 15)),
                    "AKIAAAAAAAAAAAAAAAAA".to_owned(),
                ]
            },
        )
    },
    regex!(
        "google-api-key",
        "google-api-key",
        &["AIza"],
        r"(AIza[A-Za-z0-9_-]{35})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("AIza{}", s.mixed(B64URL, 35))),
        |s| {
            vec![
                format!("AIza{}", s.mixed(B62, 34)),
                format!("AIza{}", s.mixed(B62, 36)),
                format!("AIzb{}", s.mixed(B62, 35)),
                format!("xAIza{}", s.mixed(B62, 35)),
            ]
        },
    ),
    Format {
        max_len: Some(2048),
        ..regex!(
            "google-oauth-token",
            "google-oauth-token",
            &["ya29."],
            r"(ya29\.[A-Za-z0-9_-]{20,})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("ya29.{}", s.mixed(B64URL, 120))),
            |s| {
                vec![
                    format!("ya29.{}", s.mixed(B62, 19)),
                    format!("ya28.{}", s.mixed(B62, 120)),
                    format!("xya29.{}", s.mixed(B62, 120)),
                ]
            },
        )
    },
    regex!(
        "google-client-secret",
        "google-client-secret",
        &["GOCSPX-"],
        r"(GOCSPX-[A-Za-z0-9_-]{24,40})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("GOCSPX-{}", s.mixed(B64URL, 28))),
        |s| {
            vec![
                format!("GOCSPX-{}", s.mixed(B62, 23)),
                format!("GOCSPX-{}", s.mixed(B62, 41)),
                format!("GOCSPY-{}", s.mixed(B62, 28)),
                format!("xGOCSPX-{}", s.mixed(B62, 28)),
            ]
        },
    ),
    Format {
        max_len: Some(512),
        ..regex!(
            "slack-app-token",
            "slack-token",
            &["xapp-"],
            r"(xapp-[A-Za-z0-9-]{10,})(?:[^A-Za-z0-9-]|\z)",
            |s| {
                let app = s.chars(&format!("{UPPER}{DIGITS}"), 10);
                Sample::token(format!("xapp-1-A{app}-{}-{}", s.chars(DIGITS, 13), s.chars(HEX, 64)))
            },
            |s| {
                vec![
                    format!("xapp-{}", s.mixed(B62, 9)),
                    format!("xapq-1-A{}-{}", s.chars(DIGITS, 10), s.chars(HEX, 64)),
                    format!("myxapp-1-A{}-{}", s.chars(DIGITS, 10), s.chars(HEX, 64)),
                ]
            },
        )
    },
    // `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`, `xoxe.xoxp-…`; dots and dashes at the end
    // are punctuation, not token; legacy workspace tokens can be as short as 8 characters
    // after the dash. A run is judged by its first 513 characters.
    Format {
        max_len: Some(514),
        window: Some(2 + 513),
        ..regex!(
            "slack-token",
            "slack-token",
            &["xox"],
            r"(xox[abeoprs][.-][A-Za-z0-9.-]{7,}[A-Za-z0-9])[.-]*(?:[^A-Za-z0-9.-]|\z)",
            |s| {
                let kind = s.pick(&["xoxb", "xoxp", "xoxa", "xoxr", "xoxs"]);
                Sample::token(format!("{kind}-{}-{}-{}", s.chars(DIGITS, 12), s.chars(DIGITS, 13), s.mixed(B62, 24)))
            },
            |s| {
                vec![
                    format!("xoxz-{}-{}", s.chars(DIGITS, 12), s.mixed(B62, 24)),
                    format!("xoxb-{}", s.mixed(B62, 7)),
                    format!("xoxb_{}-{}", s.chars(DIGITS, 12), s.mixed(B62, 24)),
                    format!("axoxb-{}-{}", s.chars(DIGITS, 12), s.mixed(B62, 24)),
                ]
            },
        )
    },
    // The path is the secret; the host stays readable. Keyed on `hooks`, with any byte for
    // the dots (`hooks.slack.com` written with other separators is still the host).
    Format {
        max_len: Some(512),
        ..regex!(
            "slack-webhook",
            "slack-webhook",
            &["hooks"],
            r"hooks.slack.com/((?:services/|triggers/)[A-Za-z0-9_/+-]{11,}|workflows/[A-Za-z0-9_/+-]{10,})(?:[^A-Za-z0-9_/+-]|\z)",
            |s| {
                let path = format!("services/T{}/B{}/{}", s.chars(UPPER, 8), s.chars(UPPER, 10), s.mixed(B62, 24));
                Sample::carried(path.clone(), format!("https://hooks.slack.com/{path}"))
            },
            |s| {
                vec![
                    "https://hooks.slack.com/services/T1".to_owned(),
                    format!(
                        "https://hooks.slack.com/api/T{}/B{}/{}",
                        s.chars(UPPER, 8),
                        s.chars(UPPER, 10),
                        s.mixed(B62, 24)
                    ),
                    format!("https://hooks.slack.company/services/T{}/B{}", s.chars(UPPER, 8), s.chars(UPPER, 10)),
                ]
            },
        )
    },
    regex!(
        "npm-token",
        "npm-token",
        &["npm_"],
        r"(npm_[A-Za-z0-9]{36,40})(?:[^A-Za-z0-9]|\z)",
        |s| Sample::token(format!("npm_{}", s.mixed(B62, 36))),
        |s| {
            vec![
                format!("npm_{}", s.mixed(B62, 35)),
                format!("npm_{}", s.mixed(B62, 41)),
                format!("npm-{}", s.mixed(B62, 36)),
                format!("xnpm_{}", s.mixed(B62, 36)),
            ]
        },
    ),
    Format {
        max_len: Some(4096),
        ..regex!(
            "pypi-token",
            "pypi-token",
            &["pypi-AgEIcHlwaS5vcmc"],
            r"(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{16,})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("pypi-AgEIcHlwaS5vcmc{}", s.mixed(B64URL, 70))),
            |s| {
                vec![
                    format!("pypi-AgEIcHlwaS5vcmc{}", s.mixed(B62, 15)),
                    format!("pypi-AgEIcHlwaS5vcmd{}", s.mixed(B62, 70)),
                    format!("xpypi-AgEIcHlwaS5vcmc{}", s.mixed(B62, 70)),
                ]
            },
        )
    },
    // Personal, deploy, runner, pipeline-trigger, CI/CD job, feature-flag, feed, incoming
    // mail, Kubernetes agent, OAuth application and SCIM tokens, with the optional routable
    // `.01.xxxxxxx` suffix: every `.` followed by a letter or digit continues the token, 400
    // characters at most (judged on the first 401).
    Format {
        max_len: Some(400),
        window: Some(401),
        ..regex!(
            "gitlab-token",
            "gitlab-token",
            &[
                "glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glffct-", "glft-", "glimt-", "glagent-", "gloas-",
                "glsoat-",
            ],
            r"(gl(?:pat|dt|rt|ptt|cbt|ffct|ft|imt|agent|oas|soat)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9][A-Za-z0-9_-]*)*)(?:[^A-Za-z0-9_.-]|\.[^A-Za-z0-9]|\.?\z)",
            |s| {
                let prefix = s.pick(&[
                    "glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glffct-", "glft-", "glimt-", "glagent-", "gloas-",
                    "glsoat-",
                ]);
                let len = 20 + s.below(50);
                let token = s.mixed(B64URL, len);
                let suffix = if s.below(2) == 0 { String::new() } else { format!(".01.{}", s.mixed(B62, 9)) };
                Sample::token(format!("{prefix}{token}{suffix}"))
            },
            |s| {
                vec![
                    format!("glpat-{}", s.mixed(B62, 19)),
                    format!("glpad-{}", s.mixed(B62, 20)),
                    format!("glfoo-{}", s.mixed(B62, 20)),
                    format!("xglpat-{}", s.mixed(B62, 20)),
                    format!("glagent-{}", s.mixed(B62, 401)),
                ]
            },
        )
    },
    // Before the OpenAI rows, which also take `sk-ant-…` and must not name it.
    Format {
        max_len: Some(512),
        ..regex!(
            "anthropic-key",
            "anthropic-key",
            &["sk-"],
            r"(sk-ant-[A-Za-z0-9_-]{20,})(?:[^A-Za-z0-9_-]|\z)",
            |s| {
                let kind = s.pick(&["api03", "oat01"]);
                Sample::token(format!("sk-ant-{kind}-{}AA", s.mixed(B64URL, 93)))
            },
            |s| {
                vec![
                    format!("sk-ant-{}", s.mixed(B62, 19)),
                    format!("sk-ant-{}", s.mixed(B62, 509)),
                    format!("xsk-ant-api03-{}", s.mixed(B62, 93)),
                ]
            },
        )
    },
    // Project, service-account and admin keys: up to 512 characters after the second dash.
    Format {
        max_len: Some("proj-".len() + 512),
        ..regex!(
            "openai-project-key",
            "openai-key",
            &["sk-"],
            r"(sk-(?:proj|None)-[A-Za-z0-9_-]{20,})(?:[^A-Za-z0-9_-]|\z)",
            |s| {
                let kind = s.pick(&["proj", "None"]);
                let len = 20 + s.below(140);
                Sample::token(format!("sk-{kind}-{}", s.mixed(B64URL, len)))
            },
            |s| {
                vec![
                    format!("sk-proj-{}", s.mixed(B62, 19)),
                    format!("sk-proj-{}", s.mixed(B62, 513)),
                    format!("xsk-proj-{}", s.mixed(B62, 156)),
                ]
            },
        )
    },
    Format {
        max_len: Some("svcacct-".len() + 512),
        ..regex!(
            "openai-service-account-key",
            "openai-key",
            &["sk-"],
            r"(sk-svcacct-[A-Za-z0-9_-]{20,})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("sk-svcacct-{}", s.mixed(B64URL, 80))),
            |s| {
                vec![
                    format!("sk-svcacct-{}", s.mixed(B62, 19)),
                    format!("sk-svcacct-{}", s.mixed(B62, 513)),
                    format!("mysk-svcacct-{}", s.mixed(B62, 80)),
                ]
            },
        )
    },
    Format {
        max_len: Some("admin-".len() + 512),
        ..regex!(
            "openai-admin-key",
            "openai-key",
            &["sk-"],
            r"(sk-admin-[A-Za-z0-9_-]{20,})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("sk-admin-{}", s.mixed(B64URL, 60))),
            |s| {
                vec![
                    format!("sk-admin-{}", s.mixed(B62, 19)),
                    format!("sk-admin-{}", s.mixed(B62, 513)),
                    format!("xsk-admin-{}", s.mixed(B62, 60)),
                ]
            },
        )
    },
    Format {
        max_len: Some(512),
        ..regex!(
            "openai-key",
            "openai-key",
            &["sk-"],
            r"(sk-[A-Za-z0-9]{32,})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("sk-{}T3BlbkFJ{}", s.mixed(B62, 20), s.mixed(B62, 20))),
            |s| {
                vec![
                    format!("sk-{}", s.mixed(B62, 31)),
                    format!("task-{}", s.mixed(B62, 40)),
                    format!("sk-{}_x", s.mixed(B62, 32)),
                ]
            },
        )
    },
    // Dashed keys that reuse `sk-`: mixed case and digits, as a package name
    // (`sk-learn-…`) never is.
    Format {
        max_len: Some(512),
        classes: Classes::UpperLowerDigit,
        ..regex!(
            "openai-dashed-key",
            "openai-key",
            &["sk-"],
            r"(sk-[A-Za-z0-9_-]{40,})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("sk-{}-{}", s.mixed(B62, 20), s.mixed(B62, 25))),
            |s| {
                vec![
                    format!("sk-{}-{}", s.chars(LOWER, 20), s.chars(LOWER, 25)),
                    format!("sk-{}-{}", s.mixed(B62, 20), s.mixed(B62, 10)),
                    format!("xsk-{}-{}", s.mixed(B62, 20), s.mixed(B62, 25)),
                ]
            },
        )
    },
    // Mixed case: a lowercase-only run is an identifier (`hf_hub_download…`), unless it is
    // 34 random letters (`huggingface-letters-token` in `business.rs`).
    Format {
        max_len: Some(64),
        classes: Classes::UpperAndLower,
        ..regex!(
            "huggingface-token",
            "huggingface-token",
            &["hf_"],
            r"(hf_[A-Za-z0-9]{30,})(?:[^A-Za-z0-9]|\z)",
            |s| {
                let rest = s.chars(&format!("{UPPER}{LOWER}"), 32);
                Sample::token(format!("hf_{}{}{rest}", s.chars(UPPER, 1), s.chars(LOWER, 1)))
            },
            |s| {
                vec![
                    format!("hf_{}", s.chars(LOWER, 36)),
                    format!("hf_{}", s.mixed(B62, 29)),
                    format!("xhf_{}", s.mixed(B62, 34)),
                ]
            },
        )
    },
    // Databricks personal access tokens: 32 hex digits, sometimes a `-N` suffix.
    regex!(
        "databricks-token",
        "databricks-token",
        &["dapi"],
        r"(dapi[0-9a-f]{32}(?:-[0-9])?)(?:[^A-Za-z0-9_-]|\z)",
        |s| {
            let suffix = if s.below(2) == 0 { String::new() } else { format!("-{}", s.below(10)) };
            Sample::token(format!("dapi{}{suffix}", s.chars(HEX, 32)))
        },
        |s| {
            vec![
                format!("dapi{}", s.chars(HEX, 31)),
                format!("dapi{}", s.chars(HEX, 33)),
                format!("dapi{}", s.chars(UPPER, 32)),
                format!("dapl{}", s.chars(HEX, 32)),
                format!("rapidapi{}", s.chars(HEX, 32)),
            ]
        },
    ),
    // Doppler personal, CLI, service (with an optional config slug), service-account, SCIM
    // and audit tokens. One three-byte keyword (`dp.`, in the short searcher) rather than
    // six prefixes in the long one.
    regex!(
        "doppler-token",
        "doppler-token",
        &["dp."],
        r"(dp\.(?:pt|ct|sa|scim|audit|st(?:\.[a-z0-9_-]{2,35})?)\.[A-Za-z0-9]{40,44})(?:[^A-Za-z0-9_]|\z)",
        |s| {
            let kind = s.pick(&["pt", "ct", "sa", "scim", "audit", "st", "st.prd", "st.dev_eu"]);
            Sample::token(format!("dp.{kind}.{}", s.mixed(B62, 43)))
        },
        |s| {
            vec![
                format!("dp.pt.{}", s.mixed(B62, 39)),
                format!("dp.pt.{}", s.mixed(B62, 45)),
                format!("dp.xx.{}", s.mixed(B62, 43)),
                format!("dp.pt.{}-{}", s.mixed(B62, 20), s.mixed(B62, 23)),
                format!("udp.pt.{}", s.mixed(B62, 43)),
            ]
        },
    ),
];
