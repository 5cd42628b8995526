//! Formats known by their structure rather than a prefix: JWTs, private-key blocks, URL
//! credentials, `Authorization` headers and the generic `password = value` assignment.

use super::*;

pub(super) static ROWS: &[Format] = &[
    shape!(
        "jwt",
        "jwt",
        &[".eyJ"],
        Shape::Jwt,
        |s| {
            let header = b64url_json("{\"alg\":\"HS256\",\"typ\":\"JWT\"}");
            let iat = 1_700_000_000 + s.below(1000);
            let payload = b64url_json(&format!("{{\"sub\":\"{}\",\"iat\":{iat}}}", s.mixed(B62, 12)));
            Sample::token(format!("{header}.{payload}.{}", s.mixed(B64URL, 43)))
        },
        |s| {
            let header = b64url_json("{\"alg\":\"HS256\"}");
            vec![
                header.clone(),
                format!("{header}.eyJ{}", s.mixed(B62, 5)),
                format!("x{header}.eyJ{}", s.mixed(B62, 30)),
            ]
        },
    ),
    shape!(
        "private-key",
        "private-key",
        &["-----BEGIN"],
        Shape::Pem,
        |s| {
            let label = s.pick(&["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY"]);
            let pem = pem_block(s, label, 6);
            Sample::carried(pem.clone(), pem)
        },
        |s| vec![pem_block(s, "PUBLIC KEY", 4), pem_block(s, "CERTIFICATE", 4)],
    ),
    shape!(
        "url-credentials",
        "url-credentials",
        &["://"],
        Shape::UrlCredentials,
        |s| {
            let password = s.mixed(&format!("{B62}!*-_.~"), 18);
            Sample::carried(password.clone(), format!("https://deploy:{password}@git.example.com/acme/widget.git"))
        },
        |_| {
            vec![
                "https://deploy:${DEPLOY_PASSWORD}@git.example.com/acme/widget.git".to_owned(),
                "https://git.example.com/acme/widget.git".to_owned(),
                "https://deploy@git.example.com/acme/widget.git".to_owned(),
            ]
        },
    ),
    shape!(
        "authorization-header",
        "authorization",
        &["uthorization", "UTHORIZATION"],
        Shape::AuthorizationHeader,
        |s| {
            let token = s.chars(HEX, 40);
            Sample::carried(token.clone(), format!("Authorization: token {token}"))
        },
        |_| {
            vec![
                "Authorization: Bearer ${TOKEN}".to_owned(),
                "Authorization: token abc".to_owned(),
                "the authorization header is required".to_owned(),
                "format!(\"Authorization: Bearer {token}\")".to_owned(),
                "Authorization: Bearer accessToken".to_owned(),
                "authorization: AuthorizationRef,".to_owned(),
                "Authorization::default()".to_owned(),
            ]
        },
    ),
    shape!(
        "bearer-token",
        "authorization",
        &["Bearer", "bearer", "BEARER"],
        Shape::Bearer,
        |s| {
            let token = s.mixed(B64URL, 40);
            Sample::carried(token.clone(), format!("Bearer {token}"))
        },
        |s| {
            vec![
                "bearer authentication".to_owned(),
                "Bearer abcdefghij".to_owned(),
                "Bearer {token}".to_owned(),
                "Bearer ${TOKEN}".to_owned(),
                "Bearer expired-installation-token".to_owned(),
                format!("xBearer {}", s.mixed(B64URL, 40)),
            ]
        },
    ),
    // The kind comes from the name (`password`, `aws-secret-key`, else `secret`); the floor
    // (3 bits per byte, no placeholder, no code) is `generic::looks_secret`. Keywords are in
    // the spellings identifiers use (snake_case, SCREAMING_CASE, camelCase/PascalCase);
    // `"auth"` is a JSON key (Docker's `config.json`).
    shape!(
        "generic-assignment",
        "secret",
        &[
            "token",
            "TOKEN",
            "Token",
            "secret",
            "SECRET",
            "Secret",
            "passw",
            "PASSW",
            "Passw",
            "passphrase",
            "PASSPHRASE",
            "_key",
            "_KEY",
            "-key",
            "-KEY",
            "apikey",
            "APIKEY",
            "credential",
            "CREDENTIAL",
            "Credential",
            "cookie",
            "COOKIE",
            "Cookie",
            "_auth",
            "_AUTH",
            "\"auth\"",
            "Key",
        ],
        Shape::Assignment,
        |s| {
            let value = s.mixed(B62, 20);
            Sample::carried(value.clone(), format!("client_secret: {value}"))
        },
        |_| {
            vec![
                "client_secret: ${CLIENT_SECRET}".to_owned(),
                "secret = changeme".to_owned(),
                "max_tokens = 4096".to_owned(),
                "secret_key = settings.SECRET_KEY".to_owned(),
                "let token: Token = token.parse()?;".to_owned(),
                "    lifetime_token: ast::Lifetime,".to_owned(),
                "\"secretlint\": \"^9.0.0\",".to_owned(),
                "KeyError: 'refresh_token'".to_owned(),
                "let async_token = async_token?;".to_owned(),
                "\"secretlint\": \"bin/secretlint.js\",".to_owned(),
                "const LAST_INPUT_KEY = \"evaluatePredicate.lastInput\";".to_owned(),
                "stateKey = \"extensionConfigurations\"".to_owned(),
            ]
        },
    ),
];
#[cfg(test)]
fn b64url_json(json: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
}

#[cfg(test)]
fn pem_block(s: &mut Seed, label: &str, lines: usize) -> String {
    let mut pem = format!("-----BEGIN {label}-----\n");
    for _ in 0..lines {
        pem.push_str(&s.chars(B64, 64));
        pem.push('\n');
    }
    pem.push_str(&s.chars(B64, 20));
    pem.push_str("==\n");
    pem.push_str(&format!("-----END {label}-----"));
    pem
}
