//! The loader's rules: key-by-key merging, trust over the file's content, inert keys.

use super::*;
use crate::trust::TrustStore;

fn setup(user: &str, ws: &str) -> (tempfile::TempDir, tempfile::TempDir) {
    let u = tempfile::tempdir().unwrap();
    let w = tempfile::tempdir().unwrap();
    std::fs::write(u.path().join("tether.toml"), user).unwrap();
    std::fs::write(w.path().join("tether.toml"), ws).unwrap();
    (u, w)
}

#[test]
fn workspace_wins_key_by_key_once_trusted() {
    let (u, w) = setup(
        "[a]\nx = 1\ny = 2\n[structural]\ncache_mb = 5\n",
        "[a]\ny = 3\n[structural]\ncache_mb = 7\n",
    );
    let root = w.path().canonicalize().unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    assert_eq!(c.get("a.y").unwrap().as_integer(), Some(2), "held back");
    assert_eq!(c.get("structural.cache_mb").unwrap().as_integer(), Some(7));
    assert_eq!(c.guarded()[0].key, "a.y");
    TrustStore::new(u.path()).trust(&root).unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    assert_eq!(c.get("a.x").unwrap().as_integer(), Some(1));
    assert_eq!(c.get("a.y").unwrap().as_integer(), Some(3));
}

#[test]
fn trust_covers_the_config_content() {
    let (u, w) = setup("", "[lsp.servers.rust]\nbinaries = [\"ra\"]\n");
    let root = w.path().canonicalize().unwrap();
    TrustStore::new(u.path()).trust(&root).unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    assert_eq!(c.trust_state(), TrustState::Trusted);
    assert!(c.get("lsp.servers.rust.binaries").is_some());
    std::fs::write(
        w.path().join("tether.toml"),
        "[lsp.servers.rust]\nbinaries = [\"/tmp/evil\"]\n",
    )
    .unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    assert_eq!(c.trust_state(), TrustState::Changed);
    assert!(c.get("lsp.servers.rust.binaries").is_none());
    assert!(!c.guarded()[0].honoured);
}

#[test]
fn a_user_config_folder_inside_the_workspace_is_not_trusted() {
    let w = tempfile::tempdir().unwrap();
    let root = w.path().canonicalize().unwrap();
    let user = root.join(".config/tether");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("tether.toml"), "[files]\nread_roots = [\"/\"]\n").unwrap();
    TrustStore::new(&user).trust(&root).unwrap();
    let c = Config::load(&root, &user).unwrap();
    assert!(c.user_dir_inside_workspace());
    assert!(!c.workspace_trusted());
    assert_eq!(c.read_roots().unwrap(), Vec::<PathBuf>::new());
}

#[test]
fn a_workspace_config_symlink_is_refused_unread() {
    let (u, w) = setup("", "");
    std::fs::remove_file(w.path().join("tether.toml")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", w.path().join("tether.toml")).unwrap();
    let e = Config::load(w.path(), u.path()).unwrap_err().to_string();
    assert!(
        e.contains("is a symlink") && e.contains("regular file"),
        "{e}"
    );
    assert!(!e.contains("root:"), "{e}");
}

#[test]
fn workspace_commands_need_trust() {
    let (u, w) = setup(
        "[lsp.servers.py]\ncommand = [\"pyright\"]\n",
        "[lsp.servers.rust]\ncommand = [\"evil\", \"--x\"]\n",
    );
    let root = w.path().canonicalize().unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    let cmd = c.command("lsp.servers.rust.command").unwrap();
    assert_eq!(cmd.get(), None);
    assert_eq!(cmd.shown(), &vec!["evil".to_string(), "--x".to_string()]);
    assert!(c.command("lsp.servers.py.command").unwrap().get().is_some());
    assert!(!c.guarded()[0].honoured);

    TrustStore::new(u.path()).trust(&root).unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    assert!(
        c.command("lsp.servers.rust.command")
            .unwrap()
            .get()
            .is_some()
    );
    assert!(c.guarded()[0].honoured);
}

#[test]
fn untrusted_workspace_can_tighten_but_not_loosen_approval_or_widen_reads() {
    let (u, w) = setup(
        "approval = \"ask\"\n[files]\nread_roots = [\"/usr\"]\n",
        "approval = \"never\"\n[files]\nread_roots = [\"/\"]\n",
    );
    let root = w.path().canonicalize().unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    assert_eq!(c.approval().unwrap(), ApprovalPolicy::Ask);
    assert_eq!(c.read_roots().unwrap(), vec![PathBuf::from("/usr")]);
    TrustStore::new(u.path()).trust(&root).unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    assert_eq!(c.approval().unwrap(), ApprovalPolicy::Never);
    assert_eq!(c.read_roots().unwrap(), vec![PathBuf::from("/")]);
}

#[test]
fn an_untrusted_workspace_may_tighten_approval_to_ask() {
    let (u, w) = setup("approval = \"never\"\n", "approval = \"ask\"\n");
    let root = w.path().canonicalize().unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    assert!(!c.workspace_trusted());
    assert_eq!(c.approval().unwrap(), ApprovalPolicy::Ask);
}

#[test]
fn a_tilde_in_read_roots_is_the_home_folder() {
    let (u, w) = setup("[files]\nread_roots = [\"~/lib\"]\n", "");
    let root = w.path().canonicalize().unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap();
    assert_eq!(c.read_roots().unwrap(), vec![home.join("lib")]);
}

#[test]
fn relative_read_roots_start_at_the_file_that_set_them() {
    let (u, w) = setup("", "[files]\nread_roots = [\"../lib\"]\n");
    let root = w.path().canonicalize().unwrap();
    TrustStore::new(u.path()).trust(&root).unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    assert_eq!(c.read_roots().unwrap(), vec![root.join("../lib")]);
    std::fs::write(
        u.path().join("tether.toml"),
        "[files]\nread_roots = [\"mine\"]\n",
    )
    .unwrap();
    std::fs::write(w.path().join("tether.toml"), "").unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    assert_eq!(c.read_roots().unwrap(), vec![u.path().join("mine")]);
}

#[test]
fn bad_files_and_values_are_explained() {
    let (u, w) = setup("approval = 3\n", "[x\n");
    let e = Config::load(w.path(), u.path()).unwrap_err().to_string();
    assert!(e.contains("does not parse"), "{e}");
    std::fs::write(w.path().join("tether.toml"), "").unwrap();
    let c = Config::load(w.path(), u.path()).unwrap();
    let e = c.approval().unwrap_err().to_string();
    assert!(
        e.contains("\"never\" or \"ask\"") && e.contains(&u.path().display().to_string()),
        "{e}"
    );
}

#[test]
fn the_inert_keys_come_from_the_definitions_and_the_rest_waits_for_trust() {
    let (u, w) = setup(
        "",
        "[ask]\ntimeout_s = 60\n[structural]\nsyntax_check = false\ntime_budget_secs = 5\n\
         [debug]\nttl_s = 60\n[eval.sandbox]\nprefix = [\"x\"]\n",
    );
    let root = w.path().canonicalize().unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    assert_eq!(c.ask_timeout().unwrap(), std::time::Duration::from_secs(60));
    assert_eq!(
        c.get("structural.syntax_check"),
        Some(&Value::Boolean(false))
    );
    for held in [
        "structural.time_budget_secs",
        "debug.ttl_s",
        "eval.sandbox.prefix",
    ] {
        assert!(c.get(held).is_none(), "{held} was used untrusted");
    }
    let guarded: Vec<String> = c.guarded().into_iter().map(|l| l.key).collect();
    assert_eq!(
        guarded,
        [
            "debug.ttl_s",
            "eval.sandbox.prefix",
            "structural.time_budget_secs"
        ]
    );
    TrustStore::new(u.path()).trust(&root).unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    assert_eq!(c.get("debug.ttl_s").and_then(Value::as_integer), Some(60));
    assert!(c.guarded().iter().all(|l| l.honoured));
}

#[test]
fn a_user_only_key_from_a_workspace_file_is_never_used() {
    let (u, w) = setup(
        "[lsp]\nrequest_timeout_s = 9\n",
        "[lsp]\nread_surfaces_build = true\nrequest_timeout_s = 5\n",
    );
    let root = w.path().canonicalize().unwrap();
    TrustStore::new(u.path()).trust(&root).unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    assert!(c.get("lsp.read_surfaces_build").is_none());
    assert_eq!(
        c.get("lsp.request_timeout_s").and_then(Value::as_integer),
        Some(5)
    );
    let build = c
        .guarded()
        .into_iter()
        .find(|l| l.key == "lsp.read_surfaces_build")
        .unwrap();
    assert!(build.user_only && !build.honoured);
    let listing = c.listing().join("\n");
    assert!(
        listing.contains(
            "lsp.read_surfaces_build = false (default; the workspace's true is not used: only \
             the user's file may set it)"
        ),
        "{listing}"
    );
    assert!(
        listing.contains("lsp.request_timeout_s = 5 (workspace)"),
        "{listing}"
    );
    assert!(
        listing.contains("debug.ttl_s = 1800 (default)"),
        "{listing}"
    );
}

#[test]
fn vibe_and_ask_are_checked_by_their_definitions() {
    let (u, w) = setup("vibe = \"yes\"\n[ask]\ntimeout_s = 0\n", "");
    let root = w.path().canonicalize().unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    let e = c.vibe().unwrap_err().to_string();
    assert!(e.contains("`vibe = \"yes\"`: give true or false"), "{e}");
    let e = c.ask_timeout().unwrap_err().to_string();
    assert!(
        e.contains("`timeout_s = 0`: give seconds from 1 to 86400"),
        "{e}"
    );
    std::fs::write(
        u.path().join("tether.toml"),
        "[files]\nread_roots = \"/\"\n",
    )
    .unwrap();
    let c = Config::load(&root, u.path()).unwrap();
    let e = c.read_roots().unwrap_err().to_string();
    assert!(e.contains("give a list of folders"), "{e}");
}

/// A host's own capability's settings follow the built-in rules: its user-only key is never
/// taken from a trusted workspace, and its inert key is taken from an untrusted one.
#[test]
fn a_host_capabilitys_own_settings_get_the_same_trust_rules() {
    use tether_tool::{Kind, Scope};
    static OWN: [Setting; 2] = [
        Setting::new(
            "mine.unsafe_flag",
            Kind::Flag { default: false },
            Scope::User,
            "a host setting only the user may set",
        ),
        Setting::new(
            "mine.page_size",
            Kind::Count {
                default: 10,
                max: 100,
            },
            Scope::Anywhere,
            "a host setting any file may set",
        ),
    ];
    let own: Vec<&'static Setting> = OWN.iter().collect();
    let (u, w) = setup("", "[mine]\nunsafe_flag = true\npage_size = 20\n");
    let root = w.path().canonicalize().unwrap();
    let untrusted = Config::load_with(&root, u.path(), &own).unwrap();
    assert_eq!(
        untrusted.get("mine.page_size").and_then(Value::as_integer),
        Some(20)
    );
    assert!(untrusted.get("mine.unsafe_flag").is_none());
    TrustStore::new(u.path()).trust(&root).unwrap();
    let trusted = Config::load_with(&root, u.path(), &own).unwrap();
    assert!(trusted.get("mine.unsafe_flag").is_none());
    let flag = trusted
        .guarded()
        .into_iter()
        .find(|l| l.key == "mine.unsafe_flag")
        .unwrap();
    assert!(flag.user_only && !flag.honoured);
    // Without its definitions, the same file's user-only key passes once trusted.
    let unknown = Config::load(&root, u.path()).unwrap();
    assert!(unknown.get("mine.unsafe_flag").is_some());
}
