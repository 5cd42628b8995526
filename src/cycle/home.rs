//! Opening the home: one left readable by other accounts (by an older forgeloop, a copy, a
//! loose umask) is made private once, recorded, and the person told (design §2.4).

use crate::store::tighten::{self, Tightened};

use super::Ctx;

/// Tightens the home when it is due and returns what to tell the person, if anything: a walk
/// that changed nothing and met no error is recorded silently. Never fails the command.
pub fn open(ctx: &Ctx) -> Option<String> {
    tighten::tighten_home(ctx.home.root(), &ctx.now()).and_then(|done| note(ctx, &done))
}

fn note(ctx: &Ctx, done: &Tightened) -> Option<String> {
    let walk = &done.walk;
    if walk.changed == 0 && walk.failed == 0 {
        return None;
    }
    let mut text = format!(
        "forgeloop: {} was readable by other accounts; made {} {} private (directories 0700, files 0600; \
         mirrors' objects stay readable for sandboxed runs). Recorded in {}; this is done once.",
        ctx.home.root().display(),
        walk.changed,
        if walk.changed == 1 { "entry" } else { "entries" },
        done.marker.display(),
    );
    if let Some(first) = walk.errors.first() {
        text.push_str(&format!(
            " {} could not be changed (first: {first}); `forgeloop doctor` lists them.",
            walk.failed
        ));
    }
    if walk.truncated {
        text.push_str(&format!(" The walk stopped after {} entries.", walk.visited));
    }
    if let Some(err) = &done.marker_error {
        text.push_str(&format!(" The record could not be written ({err}), so the next command looks again."));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_loose_home_is_tightened_and_told_once_and_a_fresh_one_silently() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Ctx::for_home(dir.path().join("home"));
        assert_eq!(open(&ctx), None, "no home yet: nothing made, nothing said");
        std::fs::create_dir_all(ctx.home.cycles_dir()).unwrap();
        std::fs::set_permissions(ctx.home.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(ctx.home.cycles_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let said = open(&ctx).unwrap();
        assert!(said.contains("made 1 entry private") && said.contains("permissions.json"), "{said}");
        assert_eq!(open(&ctx), None, "recorded: said once");

        let fresh = Ctx::for_home(dir.path().join("fresh"));
        std::fs::create_dir(fresh.home.root()).unwrap();
        std::fs::set_permissions(fresh.home.root(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(open(&fresh), None);
        assert!(fresh.home.root().join(tighten::MARKER).is_file(), "recorded even when nothing changed");
    }
}
