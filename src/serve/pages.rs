//! The authorization pages `serve` shows the person: the pairing code, then what the client
//! will be able to do. Plain HTML, no script, every value escaped.

use std::collections::HashMap;

use crate::cycle::connector::RepositoryRow;
use crate::domain::terminal;

use super::auth::Client;

/// The request fields the pairing form carries to its POST.
pub const CARRIED: [&str; 7] =
    ["response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method", "state", "resource"];

/// `text` safe inside HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Controls, and bidi controls that would reorder what the person reads.
            c if c.is_control() || terminal::is_control(c) => {}
            c => out.push(c),
        }
    }
    out
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
<meta name=\"referrer\" content=\"same-origin\"><title>{t}</title>\
<style>body{{font-family:system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em;line-height:1.5}}\
input{{font-size:1.4em;letter-spacing:.2em;width:10em}}button{{font-size:1.1em;margin-right:1em}}.note{{color:#555}}</style>\
</head><body><h1>{t}</h1>{body}</body></html>",
        t = escape(title)
    )
}

/// Who asks, as the person should read it: the name the client gave itself, isolated from
/// the text around it, and apart from it what forgeloop knows of where it came from, where
/// the grant goes (the redirect's host), and the other clients that use the same name.
fn who(client: &Client, namesakes: &[String]) -> String {
    let name = client
        .claimed_name
        .as_deref()
        .map_or("A client without a name".to_owned(), |n| format!("<bdi>{}</bdi>", escape(n)));
    let origin = match &client.document {
        Some(url) => format!(
            "Its name is its own claim; its description was read from <code>{}</code>, which is what identifies it.",
            escape(url)
        ),
        None => "It registered itself with this server under that name, which nobody has checked.".to_owned(),
    };
    let hosts: Vec<String> = client
        .redirect_uris
        .iter()
        .map(|u| format!("<code>{}</code>", escape(&crate::domain::connector::redirect_host(u))))
        .collect();
    let goes = match hosts.is_empty() {
        true => String::new(),
        false => format!("<p>If you go on, access goes to <strong>{}</strong>.</p>", hosts.join(", ")),
    };
    let warning = match namesakes.is_empty() {
        true => String::new(),
        false => format!(
            "<p><strong>Careful:</strong> another client uses the same name and goes to {}. Check the host above is the one you meant.</p>",
            namesakes.iter().map(|h| format!("<code>{}</code>", escape(h))).collect::<Vec<_>>().join("; ")
        ),
    };
    format!(
        "<p><strong>{name}</strong> asks to use forgeloop on this machine.</p><p class=\"note\">{origin}</p>{goes}{warning}"
    )
}

/// Asks for the pairing code, carrying the authorization request's fields.
pub fn pairing(
    client: &Client,
    namesakes: &[String],
    query: &HashMap<String, String>,
    message: Option<&str>,
) -> String {
    let hidden: String = CARRIED
        .iter()
        .filter_map(|k| query.get(*k).map(|v| (k, v)))
        .map(|(k, v)| format!("<input type=\"hidden\" name=\"{k}\" value=\"{}\">", escape(v)))
        .collect();
    let message = message.map(|m| format!("<p><strong>{}</strong></p>", escape(m))).unwrap_or_default();
    page(
        "Connect to forgeloop",
        &format!(
            "{}{message}\
<p>Type the pairing code forgeloop shows you (in the terminal running <code>forgeloop serve</code>, \
or in the control room). Nobody else can see it.</p>\
<form method=\"post\" action=\"/authorize\">{hidden}<p><input name=\"pairing_code\" autocomplete=\"off\" \
autofocus placeholder=\"XXXX-XXXX\"></p><p><button type=\"submit\">Continue</button></p></form>",
            who(client, namesakes)
        ),
    )
}

/// What the client will be able to do, with Allow and Deny.
pub fn consent(client: &Client, namesakes: &[String], ticket: &str, repositories: &[RepositoryRow]) -> String {
    let repos: String = if repositories.is_empty() {
        "<li>none yet: the person binds repositories with <code>forgeloop project bind</code></li>".to_owned()
    } else {
        repositories
            .iter()
            .map(|r| {
                let profile = r.profile.as_deref().map_or("no test profile: test_pr refuses".to_owned(), |p| {
                    format!("tests run the profile {}", escape(p))
                });
                format!("<li><code>{}</code> ({profile})</li>", escape(&r.repository))
            })
            .collect()
    };
    page(
        "Allow this client?",
        &format!(
            "{who}<p>If you allow it, it will be able to:</p><ul>\
<li>list the repositories below;</li>\
<li>start cycles in them, each waiting for you to confirm its brief in the control room;</li>\
<li>test pull requests of the cycles it started, with your test profile for the repository, in forgeloop's sandbox, within each cycle's iteration cap;</li>\
<li>read those cycles' status, redacted test reports, diffs and handoffs.</li></ul>\
<p>It will <strong>not</strong> be able to run commands of its own, read files, confirm briefs, approve, lift blocks, allow network, raise caps, or merge anything.</p>\
<p>Repositories:</p><ul>{repos}</ul>\
<form method=\"post\" action=\"/authorize/consent\"><input type=\"hidden\" name=\"ticket\" value=\"{ticket}\">\
<button type=\"submit\" name=\"decision\" value=\"allow\">Allow</button>\
<button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>\
<p class=\"note\">You can revoke it any time: <code>forgeloop serve --revoke GRANT</code> or the control room.</p>",
            who = who(client, namesakes),
            ticket = escape(ticket)
        ),
    )
}

/// An error the person sees (a bad client or redirect: never redirected to).
pub fn error(message: &str) -> String {
    page("forgeloop cannot continue", &format!("<p>{}</p>", escape(message)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(name: &str, document: Option<&str>) -> Client {
        Client {
            name: name.into(),
            claimed_name: Some(name.into()),
            document: document.map(str::to_owned),
            redirect_uris: Vec::new(),
            registered_at: 0,
        }
    }

    #[test]
    fn values_are_escaped() {
        let mut query = HashMap::new();
        query.insert("state".to_owned(), "\"><script>x</script>".to_owned());
        let html = pairing(&client("<b>evil</b>", None), &[], &query, Some("a & b"));
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("<b>evil"), "{html}");
        assert!(html.contains("&quot;&gt;&lt;script&gt;"));
        assert!(html.contains("a &amp; b"));
    }

    #[test]
    fn the_page_says_where_a_client_comes_from_apart_from_its_name() {
        let registered = pairing(&client("Claude (claude.ai)", None), &[], &HashMap::new(), None);
        assert!(registered.contains("<bdi>Claude (claude.ai)</bdi>"), "{registered}");
        assert!(registered.contains("registered itself with this server under that name, which nobody has checked"));
        let url = "https://files.example/u/c.json";
        let known = consent(&client("Claude\u{202e}ia.edualc\u{2066}", Some(url)), &[], "t", &[]);
        assert!(known.contains("<bdi>Claudeia.edualc</bdi>"), "bidi controls are dropped: {known}");
        assert!(known.contains(&format!("read from <code>{url}</code>, which is what identifies it")), "{known}");
    }

    #[test]
    fn both_pages_say_where_access_goes_and_warn_of_a_namesake() {
        let mut asking = client("ChatGPT", None);
        asking.redirect_uris = vec!["https://ChatGPT.com/connector_platform_oauth_redirect".into()];
        let namesakes = ["evil.example".to_owned()];
        for html in [pairing(&asking, &namesakes, &HashMap::new(), None), consent(&asking, &namesakes, "t", &[])] {
            assert!(html.contains("access goes to <strong><code>chatgpt.com</code>"), "{html}");
            assert!(html.contains("another client uses the same name") && html.contains("evil.example"), "{html}");
        }
        let alone = pairing(&asking, &[], &HashMap::new(), None);
        assert!(!alone.contains("Careful"), "{alone}");
    }
}
