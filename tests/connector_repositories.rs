//! Which repositories the remote connector may use (docs/connector.md): those bound in the
//! Project registry, and — for a person who only uses the connector and has no ChatGPT Project —
//! those listed in `[connector] repositories`. Anything else is refused before a cycle is made.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, unreachable_pub)] // test code: the product's lints (Cargo.toml) do not apply

mod support;

use forgeloop::cycle::connector::{self, StartInput};
use forgeloop::domain::connector::Grant;
use support::world::World;

fn grant(ctx: &forgeloop::cycle::Ctx) -> Grant {
    let grant: Grant = serde_json::from_value(serde_json::json!({
        "id": "g_0123456789ab", "client_id": "c", "client_name": "ChatGPT",
        "redirect_uris": ["https://chatgpt.com/connector_platform_oauth_redirect"],
        "resource": "https://example.test/mcp", "created_at": "2026-12-05T00:00:00Z"
    }))
    .unwrap();
    let copy = grant.clone();
    connector::files(ctx)
        .update_grants(move |grants| {
            grants.grants.push(copy);
            Ok::<(), ()>(())
        })
        .unwrap()
        .unwrap();
    grant
}

fn input(repository: &str) -> StartInput {
    StartInput {
        repository: repository.into(),
        fields: ["Fix calc".into(), "2+3=5".into(), "calc.sh".into(), "none".into(), "sh test.sh".into()],
        question: "Fix calc.sh and open a PR.".into(),
    }
}

#[test]
fn a_repository_listed_in_the_config_needs_no_project_and_others_are_refused() {
    let w = World::new();
    w.config(
        "[mcp.profiles.unit]\ncommands = [[\"sh\", \"test.sh\"]]\n\n[connector]\nrepositories = [\"Acme/Widget\"]\ndefault_profile = \"unit\"\n",
    );
    let mut ctx = w.ctx();
    let config = w.path("xdg-config/forgeloop/config.toml");
    ctx.config = forgeloop::config::Config::load(&config, true).unwrap();
    let rows = connector::repositories(&ctx);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0].repository.as_str(), rows[0].profile.as_deref()), ("acme/widget", Some("unit")));

    let grant = grant(&ctx);
    let started = connector::start_cycle(&ctx, &grant, input("acme/widget"), "r1").unwrap();
    assert_eq!(started.status, "AWAITING_BRIEF_CONFIRMATION");
    let refused = connector::start_cycle(&ctx, &grant, input("acme/other"), "r2").unwrap_err().to_string();
    assert!(refused.contains("[connector] repositories"), "{refused}");
    assert!(
        !w.sb.home().join("cycles").read_dir().unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("other"))
    );
}

#[test]
fn a_repository_name_that_is_not_owner_slash_repo_fails_the_load() {
    let w = World::new();
    w.config("[connector]\nrepositories = [\"not a repository\"]\n");
    let err = forgeloop::config::Config::load(&w.path("xdg-config/forgeloop/config.toml"), true).unwrap_err();
    assert!(err.to_string().contains("[connector] repositories"), "{err}");
}
