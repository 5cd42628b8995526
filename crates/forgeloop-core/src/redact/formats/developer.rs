//! Developer tools: CI/CD, package registries, code hosts beyond GitHub, observability,
//! project tools.

#[allow(unused_imports)]
use super::*;

#[cfg(test)]
const UPPER_HEX: &str = "0123456789ABCDEF";

/// The assignment of a hand-written context regex (a value that a context row's generated
/// samples cannot express, such as a UUID): as `formats::CONTEXT_ASSIGN`, plus a bare `||`.
macro_rules! assign {
    () => {
        r#"[\s'"`\]]{0,3}(?:=|:{1,3}=?|=>|\?=|\|\|:?|<-|<=|>|,)[\s'"`=]{0,5}"#
    };
}

#[cfg(test)]
fn uuid(s: &mut Seed) -> String {
    format!("{}-{}-{}-{}-{}", s.chars(HEX, 8), s.chars(HEX, 4), s.chars(HEX, 4), s.chars(HEX, 4), s.chars(HEX, 12))
}

pub(super) static ROWS: &[Format] = &[
    // GitLab runner registration tokens (deprecated): `GR1348941` and 20 more.
    Format {
        max_len: Some(64),
        ..regex!(
            "gitlab-runner-registration-token",
            "gitlab-token",
            &["GR1348941"],
            r"(GR1348941[A-Za-z0-9_-]{20,})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("GR1348941{}", s.mixed(B64URL, 20))),
            |s| {
                vec![
                    format!("GR1348941{}", s.mixed(B62, 19)),
                    format!("GR1348942{}", s.mixed(B62, 20)),
                    format!("XGR1348941{}", s.mixed(B62, 20)),
                ]
            },
        )
    },
    // The session cookie of a GitLab web login: 32 lowercase letters and digits.
    regex!(
        "gitlab-session-cookie",
        "gitlab-session",
        &["_gitlab_session="],
        r"_gitlab_session=([0-9a-z]{32})(?:[^A-Za-z0-9_-]|\z)",
        |s| {
            let v = s.mixed(LOWER_DIGITS, 32);
            Sample::carried(v.clone(), format!("Cookie: _gitlab_session={v}; path=/"))
        },
        |s| {
            vec![
                format!("_gitlab_session={}", s.mixed(LOWER_DIGITS, 31)),
                format!("_gitlab_session={}", s.mixed(LOWER_DIGITS, 33)),
                format!("_gitlab_session={}", s.chars(UPPER, 32)),
                format!("_gitlab_sessions={}", s.mixed(LOWER_DIGITS, 32)),
            ]
        },
    ),
    // CircleCI personal and project API tokens: `CCIPAT_`/`CCIPRJ_`, an id, `_`, 40 hex.
    Format {
        max_len: Some(128),
        ..regex!(
            "circleci-token",
            "circleci-token",
            &["CCIPAT_", "CCIPRJ_"],
            r"(CCIP(?:AT|RJ)_[A-Za-z0-9]{16,}_[A-Fa-f0-9]{40})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("{}{}_{}", s.pick(&["CCIPAT_", "CCIPRJ_"]), s.mixed(B62, 22), s.chars(HEX, 40))),
            |s| {
                vec![
                    format!("CCIPAT_{}_{}", s.mixed(B62, 22), s.chars(HEX, 39)),
                    format!("CCIPXX_{}_{}", s.mixed(B62, 22), s.chars(HEX, 40)),
                    format!("CCIPAT_{}_{}", s.mixed(B62, 22), s.chars(UPPER, 40)),
                    format!("XCCIPAT_{}_{}", s.mixed(B62, 22), s.chars(HEX, 40)),
                ]
            },
        )
    },
    // Buildkite user API access tokens: `bkua_` and 40 hex.
    regex!(
        "buildkite-token",
        "buildkite-token",
        &["bkua_"],
        r"(bkua_[a-f0-9]{40})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("bkua_{}", s.chars(HEX, 40))),
        |s| {
            vec![
                format!("bkua_{}", s.chars(HEX, 39)),
                format!("bkua_{}", s.chars(HEX, 41)),
                format!("bkua_{}", s.chars(UPPER, 40)),
                format!("bkub_{}", s.chars(HEX, 40)),
                format!("xbkua_{}", s.chars(HEX, 40)),
            ]
        },
    ),
    // Docker Hub personal and organisation access tokens.
    Format {
        max_len: Some(64),
        ..regex!(
            "dockerhub-token",
            "dockerhub-token",
            &["dckr_"],
            r"(dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("dckr_{}_{}", s.pick(&["pat", "oat"]), s.mixed(B64URL, 27))),
            |s| {
                vec![
                    format!("dckr_pat_{}", s.mixed(B62, 26)),
                    format!("dckr_pot_{}", s.mixed(B62, 27)),
                    format!("xdckr_pat_{}", s.mixed(B62, 27)),
                    format!("dckr_pat_{}", s.mixed(B62, 70)),
                ]
            },
        )
    },
    // crates.io API tokens: `cio` and 32 letters and digits, mixed as a word never is.
    Format {
        classes: Classes::UpperLowerDigit,
        ..regex!(
            "crates-io-token",
            "crates-io-token",
            &["cio"],
            r"(cio[A-Za-z0-9]{32})(?:[^A-Za-z0-9_-]|\z)",
            |s| Sample::token(format!("cio{}", s.mixed(B62, 32))),
            |s| {
                vec![
                    format!("cio{}", s.mixed(B62, 31)),
                    format!("cio{}", s.mixed(B62, 33)),
                    format!("cio{}", s.chars(LOWER, 32)),
                    format!("cia{}", s.mixed(B62, 32)),
                    format!("social{}", s.mixed(B62, 32)),
                ]
            },
        )
    },
    // Sourcegraph access tokens: `sgp_`, an optional instance id or `local`, 40 hex.
    regex!(
        "sourcegraph-token",
        "sourcegraph-token",
        &["sgp_"],
        r"(sgp_(?:[A-Fa-f0-9]{16}_|local_)?[A-Fa-f0-9]{40})(?:[^A-Za-z0-9_-]|\z)",
        |s| {
            let instance = s.pick(&["", "local_", "x"]);
            let instance = if instance == "x" { format!("{}_", s.chars(HEX, 16)) } else { instance.to_owned() };
            Sample::token(format!("sgp_{instance}{}", s.chars(HEX, 40)))
        },
        |s| {
            vec![
                format!("sgp_{}", s.chars(HEX, 39)),
                format!("sgp_{}", s.chars(LOWER, 40)),
                format!("sgq_{}", s.chars(HEX, 40)),
                format!("xsgp_{}", s.chars(HEX, 40)),
            ]
        },
    ),
    // Postman API keys: `PMAK-`, 24 hex, `-`, 34 hex.
    regex!(
        "postman-api-key",
        "postman-api-key",
        &["PMAK-"],
        r"(PMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("PMAK-{}-{}", s.chars(HEX, 24), s.chars(HEX, 34))),
        |s| {
            vec![
                format!("PMAK-{}-{}", s.chars(HEX, 24), s.chars(HEX, 33)),
                format!("PMAK-{}-{}", s.chars(LOWER, 24), s.chars(LOWER, 34)),
                format!("PMAX-{}-{}", s.chars(HEX, 24), s.chars(HEX, 34)),
                format!("XPMAK-{}-{}", s.chars(HEX, 24), s.chars(HEX, 34)),
            ]
        },
    ),
    // ReadMe API keys: `rdme_` and 70 lowercase letters and digits.
    regex!(
        "readme-api-key",
        "readme-api-key",
        &["rdme_"],
        r"(rdme_[a-z0-9]{70})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("rdme_{}", s.mixed(LOWER_DIGITS, 70))),
        |s| {
            vec![
                format!("rdme_{}", s.mixed(LOWER_DIGITS, 69)),
                format!("rdme_{}", s.mixed(LOWER_DIGITS, 71)),
                format!("rdme_{}", s.chars(UPPER, 70)),
                format!("xrdme_{}", s.mixed(LOWER_DIGITS, 70)),
            ]
        },
    ),
    // Sentry user auth tokens (`sntryu_` and 64 hex) and organisation tokens (`sntrys_`,
    // base64 JSON claims, `_`, a 43-character base64 secret).
    Format {
        max_len: Some(1024),
        ..regex!(
            "sentry-token",
            "sentry-token",
            &["sntry"],
            r"(sntry(?:u_[a-f0-9]{64}|s_eyJ[A-Za-z0-9+/]{20,}={0,2}_[A-Za-z0-9+/]{43}))(?:[^A-Za-z0-9+/=_-]|\z)",
            |s| {
                if s.below(2) == 0 {
                    Sample::token(format!("sntryu_{}", s.chars(HEX, 64)))
                } else {
                    let (claims, rest) = (s.mixed(B64, 40), s.mixed(B64, 60));
                    Sample::token(format!("sntrys_eyJpYXQiO{claims}LCJyZWdpb25fdXJs{rest}_{}", s.mixed(B64, 43)))
                }
            },
            |s| {
                vec![
                    format!("sntryu_{}", s.chars(HEX, 63)),
                    format!("sntryu_{}", s.chars(HEX, 65)),
                    format!("sntryx_{}", s.chars(HEX, 64)),
                    format!("xsntryu_{}", s.chars(HEX, 64)),
                    format!("sntrys_eyJ{}_{}", s.mixed(B62, 40), s.mixed(B62, 42)),
                ]
            },
        )
    },
    // Grafana API keys (base64 JSON `{"k":…`), Cloud tokens (`glc_`) and service-account
    // tokens (`glsa_`, 32 letters and digits, `_`, an 8-hex checksum).
    Format {
        max_len: Some(512),
        ..regex!(
            "grafana-api-key",
            "grafana-token",
            &["eyJrIjoi"],
            r"(eyJrIjoi[A-Za-z0-9]{70,}={0,3})(?:[^A-Za-z0-9+/=_-]|\z)",
            |s| Sample::token(format!("eyJrIjoi{}", s.mixed(B62, 90))),
            |s| {
                vec![
                    format!("eyJrIjoi{}", s.mixed(B62, 69)),
                    format!("eyJrIjoj{}", s.mixed(B62, 90)),
                    format!("xeyJrIjoi{}", s.mixed(B62, 90)),
                    format!("eyJrIjoi{}", s.mixed(B62, 600)),
                ]
            },
        )
    },
    Format {
        max_len: Some(512),
        ..regex!(
            "grafana-cloud-token",
            "grafana-token",
            &["glc_"],
            r"(glc_[A-Za-z0-9+/]{32,}={0,3})(?:[^A-Za-z0-9+/=_-]|\z)",
            |s| Sample::token(format!("glc_{}", s.mixed(B64, 100))),
            |s| {
                vec![
                    format!("glc_{}", s.mixed(B62, 31)),
                    format!("glc_{}", s.mixed(B62, 600)),
                    format!("glx_{}", s.mixed(B62, 100)),
                    format!("xglc_{}", s.mixed(B62, 100)),
                ]
            },
        )
    },
    regex!(
        "grafana-service-account-token",
        "grafana-token",
        &["glsa_"],
        r"(glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("glsa_{}_{}", s.mixed(B62, 32), s.chars(HEX, 8))),
        |s| {
            vec![
                format!("glsa_{}_{}", s.mixed(B62, 31), s.chars(HEX, 8)),
                format!("glsa_{}_{}", s.mixed(B62, 32), s.chars(UPPER, 8)),
                format!("glsb_{}_{}", s.mixed(B62, 32), s.chars(HEX, 8)),
                format!("xglsa_{}_{}", s.mixed(B62, 32), s.chars(HEX, 8)),
            ]
        },
    ),
    // New Relic user API keys (`NRAK-`), insert keys (`NRII-`) and browser keys (`NRJS-`).
    regex!(
        "new-relic-key",
        "new-relic-key",
        &["NRAK-", "NRII-", "NRJS-"],
        r"(NR(?:AK-[A-Za-z0-9]{27}|II-[A-Za-z0-9_-]{32}|JS-[A-Fa-f0-9]{19}))(?:[^A-Za-z0-9_-]|\z)",
        |s| {
            Sample::token(match s.below(3) {
                0 => format!("NRAK-{}", s.chars(UPPER_DIGITS, 27)),
                1 => format!("NRII-{}", s.mixed(B64URL, 32)),
                _ => format!("NRJS-{}", s.chars(HEX, 19)),
            })
        },
        |s| {
            vec![
                format!("NRAK-{}", s.chars(UPPER_DIGITS, 26)),
                format!("NRAK-{}", s.chars(UPPER_DIGITS, 28)),
                format!("NRJS-{}", s.chars(LOWER, 19)),
                format!("NRXX-{}", s.chars(UPPER_DIGITS, 27)),
                format!("XNRAK-{}", s.chars(UPPER_DIGITS, 27)),
            ]
        },
    ),
    // Linear personal API keys: `lin_api_` and 40 letters and digits.
    regex!(
        "linear-api-key",
        "linear-api-key",
        &["lin_api_"],
        r"(lin_api_[A-Za-z0-9]{40})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("lin_api_{}", s.mixed(B62, 40))),
        |s| {
            vec![
                format!("lin_api_{}", s.mixed(B62, 39)),
                format!("lin_api_{}", s.mixed(B62, 41)),
                format!("lin_apx_{}", s.mixed(B62, 40)),
                format!("xlin_api_{}", s.mixed(B62, 40)),
            ]
        },
    ),
    // Notion integration tokens: `ntn_`, 11 digits, 35 letters and digits.
    regex!(
        "notion-token",
        "notion-token",
        &["ntn_"],
        r"(ntn_[0-9]{11}[A-Za-z0-9]{35})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("ntn_{}{}", s.chars(DIGITS, 11), s.mixed(B62, 35))),
        |s| {
            vec![
                format!("ntn_{}{}", s.chars(DIGITS, 11), s.mixed(B62, 34)),
                format!("ntn_{}{}", s.chars(DIGITS, 11), s.mixed(B62, 36)),
                format!("ntn_{}{}", s.chars(LOWER, 11), s.mixed(B62, 35)),
                format!("xntn_{}{}", s.chars(DIGITS, 11), s.mixed(B62, 35)),
            ]
        },
    ),
    // Airtable personal access tokens: `pat`, a 14-character id, `.`, 64 hex.
    regex!(
        "airtable-token",
        "airtable-token",
        &["pat"],
        r"(pat[A-Za-z0-9]{14}\.[a-f0-9]{64})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("pat{}.{}", s.mixed(B62, 14), s.chars(HEX, 64))),
        |s| {
            vec![
                format!("pat{}.{}", s.mixed(B62, 13), s.chars(HEX, 64)),
                format!("pat{}.{}", s.mixed(B62, 14), s.chars(HEX, 63)),
                format!("pat{}.{}", s.mixed(B62, 14), s.chars(UPPER, 64)),
                format!("compat{}.{}", s.mixed(B62, 14), s.chars(HEX, 64)),
            ]
        },
    ),
    // Typeform personal tokens: `tfp_` and 59 characters.
    regex!(
        "typeform-token",
        "typeform-token",
        &["tfp_"],
        r"(tfp_[A-Za-z0-9_=.-]{59})(?:[^A-Za-z0-9_=-]|\z)",
        |s| Sample::token(format!("tfp_{}_{}", s.mixed(B62, 44), s.mixed(B62, 14))),
        |s| {
            vec![
                format!("tfp_{}", s.mixed(B62, 58)),
                format!("tfp_{}", s.mixed(B62, 60)),
                format!("tfq_{}", s.mixed(B62, 59)),
                format!("xtfp_{}", s.mixed(B62, 59)),
            ]
        },
    ),
    // Frame.io developer tokens: `fio-u-` and 64 characters.
    regex!(
        "frameio-token",
        "frameio-token",
        &["fio-u-"],
        r"(fio-u-[A-Za-z0-9_=-]{64})(?:[^A-Za-z0-9_=-]|\z)",
        |s| Sample::token(format!("fio-u-{}", s.mixed(B64URL, 64))),
        |s| {
            vec![
                format!("fio-u-{}", s.mixed(B62, 63)),
                format!("fio-u-{}", s.mixed(B62, 65)),
                format!("fio-x-{}", s.mixed(B62, 64)),
                format!("xfio-u-{}", s.mixed(B62, 64)),
            ]
        },
    ),
    // 42 intranet (intra.42.fr) application secrets: `s-s4t2ud-`/`s-s4t2af-` and 64 hex.
    regex!(
        "intra42-client-secret",
        "intra42-secret",
        &["s-s4t2"],
        r"(s-s4t2(?:ud|af)-[A-Fa-f0-9]{64})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("s-s4t2{}-{}", s.pick(&["ud", "af"]), s.chars(HEX, 64))),
        |s| {
            vec![
                format!("s-s4t2ud-{}", s.chars(HEX, 63)),
                format!("s-s4t2ud-{}", s.chars(HEX, 65)),
                format!("s-s4t2xx-{}", s.chars(HEX, 64)),
                format!("s-s4t2ud-{}", s.chars(LOWER, 64)),
            ]
        },
    ),
    // JFrog Artifactory API keys (`AKCp`) and reference tokens (`cmVmd`, base64 `ref`).
    regex!(
        "artifactory-api-key",
        "artifactory-token",
        &["AKCp"],
        r"(AKCp[A-Za-z0-9]{69})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("AKCp{}", s.mixed(B62, 69))),
        |s| {
            vec![
                format!("AKCp{}", s.mixed(B62, 68)),
                format!("AKCp{}", s.mixed(B62, 70)),
                format!("AKCq{}", s.mixed(B62, 69)),
                format!("XAKCp{}", s.mixed(B62, 69)),
            ]
        },
    ),
    regex!(
        "artifactory-reference-token",
        "artifactory-token",
        &["cmVmd"],
        r"(cmVmd[A-Za-z0-9]{59})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("cmVmd{}", s.mixed(B62, 59))),
        |s| {
            vec![
                format!("cmVmd{}", s.mixed(B62, 58)),
                format!("cmVmd{}", s.mixed(B62, 60)),
                format!("cmVme{}", s.mixed(B62, 59)),
                format!("xcmVmd{}", s.mixed(B62, 59)),
            ]
        },
    ),
    // Clojars deploy tokens: `CLOJARS_` and 60 lowercase letters and digits.
    regex!(
        "clojars-token",
        "clojars-token",
        &["CLOJARS_"],
        r"(CLOJARS_[A-Za-z0-9]{60})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("CLOJARS_{}", s.mixed(LOWER_DIGITS, 60))),
        |s| {
            vec![
                format!("CLOJARS_{}", s.mixed(LOWER_DIGITS, 59)),
                format!("CLOJARS_{}", s.mixed(LOWER_DIGITS, 61)),
                format!("CLOJARZ_{}", s.mixed(LOWER_DIGITS, 60)),
                format!("XCLOJARS_{}", s.mixed(LOWER_DIGITS, 60)),
            ]
        },
    ),
    // RubyGems API keys: `rubygems_` and 48 hex.
    regex!(
        "rubygems-token",
        "rubygems-token",
        &["rubygems_"],
        r"(rubygems_[a-f0-9]{48})(?:[^A-Za-z0-9_-]|\z)",
        |s| Sample::token(format!("rubygems_{}", s.chars(HEX, 48))),
        |s| {
            vec![
                format!("rubygems_{}", s.chars(HEX, 47)),
                format!("rubygems_{}", s.chars(HEX, 49)),
                format!("rubygems_{}", s.chars(UPPER, 48)),
                format!("myrubygems_{}", s.chars(HEX, 48)),
            ]
        },
    ),
    // Atlassian API tokens (Jira, Confluence, Bitbucket Cloud): `ATATT3` and ~186 more.
    Format {
        max_len: Some(256),
        ..regex!(
            "atlassian-api-token",
            "atlassian-token",
            &["ATATT3"],
            r"(ATATT3[A-Za-z0-9_=-]{150,})(?:[^A-Za-z0-9_=-]|\z)",
            |s| Sample::token(format!("ATATT3{}={}", s.mixed(B64URL, 177), s.chars(UPPER_HEX, 8))),
            |s| {
                vec![
                    format!("ATATT3{}", s.mixed(B62, 149)),
                    format!("ATATT4{}", s.mixed(B62, 186)),
                    format!("XATATT3{}", s.mixed(B62, 186)),
                ]
            },
        )
    },
    // Mapbox public (`pk.`) and secret (`sk.`) tokens: base64 JSON claims, `.`, a signature.
    Format {
        max_len: Some(512),
        ..regex!(
            "mapbox-token",
            "mapbox-token",
            &["pk.", "sk."],
            r"([ps]k\.[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,})(?:[^A-Za-z0-9_.-]|\z)",
            |s| Sample::token(format!("{}{}.{}", s.pick(&["pk.eyJ1", "sk.eyJ1"]), s.mixed(B62, 60), s.mixed(B62, 22))),
            |s| {
                vec![
                    format!("pk.{}.{}", s.mixed(B62, 49), s.mixed(B62, 22)),
                    format!("pk.{}.{}", s.mixed(B62, 60), s.mixed(B62, 19)),
                    format!("xk.{}.{}", s.mixed(B62, 60), s.mixed(B62, 22)),
                    format!("apk.{}.{}", s.mixed(B62, 60), s.mixed(B62, 22)),
                    "obj.pk.save()".to_owned(),
                ]
            },
        )
    },
    // NuGet feed passwords in `NuGet.Config`; `%VAR%` and `$(VAR)` references are left alone.
    Format {
        any_case: true,
        ..regex!(
            "nuget-config-password",
            "nuget-password",
            &["<add key="],
            r#"(?i)<add\s+key\s*=\s*"(?:ClearText)?Password"\s+value\s*=\s*"([^%$\n][^\n]{7,}?)"\s*/>"#,
            |s| {
                let v = s.mixed(B64, 24);
                Sample::carried(v.clone(), format!(r#"<add key="ClearTextPassword" value="{v}" />"#))
            },
            |s| {
                vec![
                    r#"<add key="ClearTextPassword" value="%NUGET_PASSWORD%" />"#.to_owned(),
                    format!(r#"<add key="Username" value="{}" />"#, s.mixed(B62, 12)),
                    format!(r#"<add key="Password" value="{}" />"#, s.mixed(B62, 7)),
                ]
            },
        )
    },
    // Freemius SDK secret keys in a PHP array: `'secret_key' => 'sk_…'`, 29 characters.
    Format {
        any_case: true,
        ..regex!(
            "freemius-secret-key",
            "freemius-secret-key",
            &["secret_key"],
            r#"(?i)secret_key["']\s*=>\s*["'](sk_\S{29})["']"#,
            |s| {
                let v = format!("sk_{}", s.mixed(B64, 29));
                Sample::carried(v.clone(), format!("'secret_key' => '{v}',"))
            },
            // A random value of another shape meets the generic assignment rule instead.
            |_| {
                vec![
                    "'secret_key' => getenv('FS_SECRET'),".to_owned(),
                    "'secret_key' => '',".to_owned(),
                    "the secret_key is sk_ and 29 characters".to_owned(),
                ]
            },
        )
    },
    // SonarQube/SonarCloud tokens: `squ_` (user), `sqp_` (project), `sqa_` (global) + 40 hex.
    regex!(
        "sonar-token",
        "sonar-token",
        &["squ_", "sqp_", "sqa_"],
        r"(sq[upa]_[A-Za-z0-9_=-]{40})(?:[^A-Za-z0-9_=-]|\z)",
        |s| Sample::token(format!("{}{}", s.pick(&["squ_", "sqp_", "sqa_"]), s.chars(HEX, 40))),
        |s| {
            vec![
                format!("squ_{}", s.chars(HEX, 39)),
                format!("squ_{}", s.chars(HEX, 41)),
                format!("sqx_{}", s.chars(HEX, 40)),
                format!("xsqu_{}", s.chars(HEX, 40)),
            ]
        },
    ),
    // Older Sonar tokens carry no prefix: 40 characters after `sonar.login`/`SONAR_TOKEN`.
    Format {
        any_case: true,
        ..regex!(
            "sonar-login-token",
            "sonar-token",
            &["sonar"],
            concat!(
                r"(?i)sonar[_.-]?(?:login|token)[0-9a-z_.\t -]{0,20}?",
                assign!(),
                r"((?:sq[upa]_)?[a-z0-9=_-]{40})(?:[^0-9a-z=_-]|\z)"
            ),
            |s| {
                let v = s.mixed(LOWER_DIGITS, 40);
                let text = match s.below(3) {
                    0 => format!("sonar.login={v}"),
                    1 => format!("export SONAR_TOKEN=\"{v}\""),
                    _ => format!("sonarToken: {v}"),
                };
                Sample::carried(v, text)
            },
            |s| {
                vec![
                    format!("sonar.projectName={}", s.mixed(LOWER_DIGITS, 40)),
                    format!("sonar.login={}", s.mixed(LOWER_DIGITS, 39)),
                    format!("sonar.login=${{SONAR_LOGIN}}{}", s.mixed(LOWER_DIGITS, 2)),
                ]
            },
        )
    },
    // Snyk API and OAuth tokens: a UUID after `SNYK_TOKEN`, `snyk_api_key` and the like.
    Format {
        any_case: true,
        ..regex!(
            "snyk-token",
            "snyk-token",
            &["snyk"],
            concat!(
                r"(?i)snyk[0-9a-z_.-]{0,12}?(?:key|token)[0-9a-z_.\t -]{0,20}?",
                assign!(),
                r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:[^0-9a-z_-]|\z)"
            ),
            |s| {
                let v = uuid(s);
                let text = match s.below(3) {
                    0 => format!("SNYK_TOKEN={v}"),
                    1 => format!("snyk_api_key: \"{v}\""),
                    _ => format!("\"snykToken\": \"{v}\","),
                };
                Sample::carried(v, text)
            },
            |s| {
                vec![
                    format!("SNYK_ORG_ID={}", uuid(s)),
                    "snyk_token = \"${SNYK_TOKEN}\"".to_owned(),
                    format!("snyk ignore --id=SNYK-JS-LODASH-{}", s.chars(DIGITS, 6)),
                ]
            },
        )
    },
    // `curl -u user:password` (also `--user`, `=`, quoted): the whole credential goes.
    Format {
        max_len: Some(1024),
        ..regex!(
            "curl-user",
            "curl-credential",
            &["curl"],
            concat!(
                r#"curl\b[^\n]{0,2048}?[ \t\r](?:-u|--user)(?:=|[ \t]{0,5})"#,
                r#"("[^"\n]*:[^"\n]*"|'[^'\n]*:[^'\n]*'"#,
                r#"|(?:"[^"\n]+"|'[^'\n]+'|[^\s:"']+):(?:"[^"\n]+"|'[^'\n]+'|[^\s"']+))(?:\s|\z)"#
            ),
            |s| {
                let (user, pass) = (s.mixed(LOWER, 6), s.mixed(B62, 16));
                let text = match s.below(3) {
                    0 => format!("curl -u {user}:{pass} https://api.example.org/v1"),
                    1 => format!("curl -s --user \"{user}:{pass}\" https://ci.example.org"),
                    _ => format!("curl --user='{user}:{pass}' -X POST https://ci.example.org"),
                };
                Sample::carried(pass, text)
            },
            |s| {
                vec![
                    format!("curl -s https://example.org/{}", s.mixed(B62, 12)),
                    format!("curl -u {} https://example.org", s.mixed(LOWER, 8)),
                    "curl --upload-file a:b https://example.org".to_owned(),
                ]
            },
        )
    },
    // Prefix-less tokens, known by the provider's name before an assignment. Where a value
    // may hold `=` (padding), samples leave it out: a leading `=` would read as assignment.
    context("bitbucket-client-id", "bitbucket-client-id", &["bitbucket"], "[a-z0-9]{32}", LOWER_DIGITS, (32, 32)),
    context(
        "bitbucket-client-secret",
        "bitbucket-client-secret",
        &["bitbucket"],
        "[a-z0-9=_-]{64}",
        LOWER_DIGITS_DASH,
        (64, 64),
    ),
    // Atlassian (Jira, Confluence) API tokens before `ATATT3`: 24 letters and digits.
    context(
        "atlassian-legacy-api-token",
        "atlassian-token",
        &["atlassian", "confluence", "jira"],
        "[a-z0-9]{24}",
        LOWER_DIGITS,
        (24, 24),
    ),
    context("codecov-token", "codecov-token", &["codecov"], "[a-z0-9]{32}", LOWER_DIGITS, (32, 32)),
    context("droneci-token", "droneci-token", &["droneci"], "[a-z0-9]{32}", LOWER_DIGITS, (32, 32)),
    context("travisci-token", "travisci-token", &["travis"], "[a-z0-9]{22}", LOWER_DIGITS, (22, 22)),
    context("sentry-legacy-token", "sentry-token", &["sentry"], "[a-f0-9]{64}", HEX, (64, 64)),
    context("datadog-token", "datadog-token", &["datadog"], "[a-z0-9]{40}", LOWER_DIGITS, (40, 40)),
    context(
        "new-relic-user-api-id",
        "new-relic-key",
        &["newrelic", "new_relic", "new-relic"],
        "[a-z0-9]{64}",
        LOWER_DIGITS,
        (64, 64),
    ),
    context("sumologic-access-id", "sumologic-key", &["sumo"], "[a-z0-9]{14}", LOWER_DIGITS, (14, 14)),
    context("sumologic-access-token", "sumologic-key", &["sumo"], "[a-z0-9]{64}", LOWER_DIGITS, (64, 64)),
    context(
        "launchdarkly-token",
        "launchdarkly-token",
        &["launchdarkly"],
        "[a-z0-9=_-]{40}",
        LOWER_DIGITS_DASH,
        (40, 40),
    ),
    context("linear-client-secret", "linear-client-secret", &["linear"], "[a-f0-9]{32}", HEX, (32, 32)),
    // Sixteen digits: 2.5 bits per byte would refuse one in a few random ids.
    Format {
        entropy: Some(2.0),
        ..context("asana-client-id", "asana-client-id", &["asana"], "[0-9]{16}", DIGITS, (16, 16))
    },
    context("asana-client-secret", "asana-client-secret", &["asana"], "[a-z0-9]{32}", LOWER_DIGITS, (32, 32)),
    context("airtable-api-key", "airtable-token", &["airtable"], "[a-z0-9]{17}", LOWER_DIGITS, (17, 17)),
    context("gitter-token", "gitter-token", &["gitter"], "[a-z0-9_-]{40}", LOWER_DIGITS_DASH, (40, 40)),
    context(
        "jfrog-api-key",
        "artifactory-token",
        &["jfrog", "artifactory", "bintray", "xray"],
        "[a-z0-9]{73}",
        LOWER_DIGITS,
        (73, 73),
    ),
    context(
        "jfrog-identity-token",
        "artifactory-token",
        &["jfrog", "artifactory", "bintray", "xray"],
        "[a-z0-9]{64}",
        LOWER_DIGITS,
        (64, 64),
    ),
    context("mattermost-token", "mattermost-token", &["mattermost"], "[a-z0-9]{26}", LOWER_DIGITS, (26, 26)),
    context(
        "privateai-api-key",
        "privateai-api-key",
        &["privateai", "private_ai", "private-ai"],
        "[a-z0-9]{32}",
        LOWER_DIGITS,
        (32, 32),
    ),
    context("rapidapi-key", "rapidapi-key", &["rapidapi"], "[a-z0-9_-]{50}", LOWER_DIGITS_DASH, (50, 50)),
    context("contentful-token", "contentful-token", &["contentful"], "[a-z0-9=_-]{43}", LOWER_DIGITS_DASH, (43, 43)),
    // Beamer keys are `b_` and 44 more; the class takes the prefix too.
    context("beamer-api-key", "beamer-api-key", &["beamer"], "[a-z0-9=_-]{46}", LOWER_DIGITS_DASH, (46, 46)),
    context("algolia-api-key", "algolia-api-key", &["algolia"], "[a-z0-9]{32}", LOWER_DIGITS, (32, 32)),
    context("looker-client-id", "looker-client-id", &["looker"], "[a-z0-9]{20}", LOWER_DIGITS, (20, 20)),
    context("looker-client-secret", "looker-client-secret", &["looker"], "[a-z0-9]{24}", LOWER_DIGITS, (24, 24)),
    context("confluent-access-token", "confluent-key", &["confluent"], "[a-z0-9]{16}", LOWER_DIGITS, (16, 16)),
    context("confluent-secret-key", "confluent-key", &["confluent"], "[a-z0-9]{64}", LOWER_DIGITS, (64, 64)),
];
