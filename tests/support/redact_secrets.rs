//! Secrets generated at test time for every family the redactor knows: the right prefix,
//! then random characters of the right class and length from a small deterministic PRNG.
//! No full-length token is ever written in the repository.
#![allow(dead_code)]

/// SplitMix64: tiny, deterministic, good enough for test data.
#[derive(Clone)]
pub struct Rng(u64);

pub const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
pub const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
pub const DIGITS: &str = "0123456789";
pub const B62: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
pub const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub const AWS_ID: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
pub const HEX: &str = "0123456789abcdef";

/// Substrings the generic rule treats as placeholders; generated passwords avoid them so a
/// test never passes by luck.
const PLACEHOLDER_PARTS: &[&str] = &[
    "xxxx", "test", "fake", "mock", "todo", "dummy", "sample", "insert", "lorem", "foobar", "example", "change", "your",
];

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn chars(&mut self, alphabet: &str, len: usize) -> String {
        let a = alphabet.as_bytes();
        (0..len).map(|_| a[self.below(a.len())] as char).collect()
    }

    /// Random characters that contain at least one uppercase, lowercase and digit, as real
    /// tokens of this length almost always do.
    pub fn mixed(&mut self, alphabet: &str, len: usize) -> String {
        loop {
            let s = self.chars(alphabet, len);
            let ok = s.bytes().any(|b| b.is_ascii_uppercase())
                && s.bytes().any(|b| b.is_ascii_lowercase())
                && s.bytes().any(|b| b.is_ascii_digit());
            let lower = s.to_ascii_lowercase();
            if ok && !PLACEHOLDER_PARTS.iter().any(|p| lower.contains(p)) {
                return s;
            }
        }
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// One generated secret. `standalone` secrets are recognisable by shape alone and may be put
/// in any context; the others come with the line that makes them recognisable.
#[derive(Clone, Debug)]
pub struct Sample {
    pub family: &'static str,
    /// The secret itself, which must not survive.
    pub secret: String,
    /// The text to embed: the secret alone, or a line that carries it.
    pub text: String,
    pub standalone: bool,
}

fn standalone(family: &'static str, secret: String) -> Sample {
    Sample { family, text: secret.clone(), secret, standalone: true }
}

fn carried(family: &'static str, secret: String, text: String) -> Sample {
    Sample { family, secret, text, standalone: false }
}

fn b64url_json(json: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
}

/// Every family in design §7, one sample each (several for families with several shapes).
pub fn all_families(rng: &mut Rng) -> Vec<Sample> {
    let mut v = Vec::new();
    for prefix in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"] {
        v.push(standalone("github-token", format!("{prefix}{}", rng.mixed(B62, 36))));
    }
    v.push(standalone("github-token", format!("github_pat_{}_{}", rng.mixed(B62, 22), rng.mixed(B62, 59))));
    v.push(standalone("openai-key", format!("sk-proj-{}", rng.mixed(B64URL, 156))));
    v.push(standalone("openai-key", format!("sk-svcacct-{}", rng.mixed(B64URL, 80))));
    v.push(standalone("openai-key", format!("sk-{}T3BlbkFJ{}", rng.mixed(B62, 20), rng.mixed(B62, 20))));
    v.push(standalone("anthropic-key", format!("sk-ant-api03-{}AA", rng.mixed(B64URL, 93))));
    v.push(standalone("anthropic-key", format!("sk-ant-oat01-{}AA", rng.mixed(B64URL, 86))));
    v.push(standalone("aws-access-key", format!("AKIA{}", rng.chars(AWS_ID, 16))));
    v.push(standalone("aws-access-key", format!("ASIA{}", rng.chars(AWS_ID, 16))));
    let aws_secret = rng.mixed(&format!("{B62}/+"), 40);
    v.push(carried("aws-secret-key", aws_secret.clone(), format!("aws_secret_access_key = {aws_secret}")));
    let aws_secret = rng.mixed(&format!("{B62}/+"), 40);
    v.push(carried("aws-secret-key", aws_secret.clone(), format!("AWS_SECRET_ACCESS_KEY={aws_secret}")));
    v.push(standalone("google-api-key", format!("AIza{}", rng.mixed(B64URL, 35))));
    v.push(standalone("google-oauth-token", format!("ya29.{}", rng.mixed(B64URL, 120))));
    v.push(standalone("google-client-secret", format!("GOCSPX-{}", rng.mixed(B64URL, 28))));
    for kind in ["xoxb", "xoxp", "xoxa", "xoxr", "xoxs"] {
        let s = format!("{kind}-{}-{}-{}", rng.chars(DIGITS, 12), rng.chars(DIGITS, 13), rng.mixed(B62, 24));
        v.push(standalone("slack-token", s));
    }
    let hook_path = format!("services/T{}/B{}/{}", rng.chars(UPPER, 8), rng.chars(UPPER, 10), rng.mixed(B62, 24));
    v.push(carried("slack-webhook", hook_path.clone(), format!("https://hooks.slack.com/{hook_path}")));
    v.push(standalone("stripe-key", format!("sk_live_{}", rng.mixed(B62, 24))));
    v.push(standalone("stripe-key", format!("rk_live_{}", rng.mixed(B62, 99))));
    v.push(standalone("stripe-key", format!("sk_test_{}", rng.mixed(B62, 24))));
    v.push(standalone("npm-token", format!("npm_{}", rng.mixed(B62, 36))));
    v.push(standalone("pypi-token", format!("pypi-AgEIcHlwaS5vcmc{}", rng.mixed(B64URL, 70))));
    v.push(standalone("gitlab-token", format!("glpat-{}", rng.mixed(B64URL, 20))));
    let hf = format!("{}{}{}", rng.chars(UPPER, 1), rng.chars(LOWER, 1), rng.chars(&format!("{UPPER}{LOWER}"), 32));
    v.push(standalone("huggingface-token", format!("hf_{hf}")));
    let header = b64url_json("{\"alg\":\"HS256\",\"typ\":\"JWT\"}");
    let payload =
        b64url_json(&format!("{{\"sub\":\"{}\",\"iat\":{}}}", rng.mixed(B62, 12), 1_700_000_000 + rng.below(1000)));
    v.push(standalone("jwt", format!("{header}.{payload}.{}", rng.mixed(B64URL, 43))));
    let pem = private_key_pem(rng, "RSA PRIVATE KEY", 12);
    v.push(carried("private-key", pem.clone(), pem));
    let pem = private_key_pem(rng, "OPENSSH PRIVATE KEY", 7);
    v.push(carried("private-key", pem.clone(), pem));
    let password = rng.mixed(&format!("{B62}!*-_.~"), 18);
    v.push(carried(
        "url-credentials",
        password.clone(),
        format!("https://deploy:{password}@git.example.com/acme/widget.git"),
    ));
    let token = format!("ghs_{}", rng.mixed(B62, 36));
    v.push(carried(
        "github-token",
        token.clone(),
        format!("https://x-access-token:{token}@github.com/acme/widget.git"),
    ));
    let token = rng.mixed(B62, 40);
    v.push(carried(
        "url-credentials",
        token.clone(),
        format!("https://x-access-token:{token}@github.com/acme/widget.git"),
    ));
    let bearer = rng.mixed(B64URL, 40);
    v.push(carried("authorization", bearer.clone(), format!("Authorization: Bearer {bearer}")));
    let tok = rng.chars(HEX, 40);
    v.push(carried("authorization", tok.clone(), format!("Authorization: token {tok}")));
    let basic = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(format!("ci-bot:{}", rng.mixed(B62, 20)))
    };
    v.push(carried("authorization", basic.clone(), format!("authorization: Basic {basic}")));
    let pw = rng.mixed(&format!("{B62}!#%^*"), 16);
    v.push(carried("password", pw.clone(), format!("password = \"{pw}\"")));
    let pw = rng.mixed(B62, 20);
    v.push(carried("secret", pw.clone(), format!("client_secret: {pw}")));
    let pw = rng.mixed(B62, 24);
    v.push(carried("secret", pw.clone(), format!("\"apiKey\": \"{pw}\"")));
    let docker = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(format!("ci-bot:{}", rng.mixed(B62, 20)))
    };
    v.push(carried("secret", docker.clone(), format!("{{\"auths\":{{\"ghcr.io\":{{\"auth\":\"{docker}\"}}}}}}")));
    v
}

pub fn private_key_pem(rng: &mut Rng, label: &str, lines: usize) -> String {
    let mut s = format!("-----BEGIN {label}-----\n");
    for _ in 0..lines {
        s.push_str(&rng.chars(B64, 64));
        s.push('\n');
    }
    s.push_str(&rng.chars(B64, 20));
    s.push_str("==\n");
    s.push_str(&format!("-----END {label}-----"));
    s
}

/// A value for a credential-like environment variable or a `known_value`.
pub fn known_value(rng: &mut Rng) -> String {
    let len = 8 + rng.below(40);
    rng.mixed(&format!("{B62}-_.~!@#$%^&*()+=/:;,?"), len)
}
