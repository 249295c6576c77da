//! `tether hook --install` with the real binary against the files a user really has: it never
//! loses a byte that is not tether's, and a failed write leaves the file as it was.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Runs `tether hook --install ARGS` with HOME at `home` and PATH holding only `path`; `shell`
/// wraps it in `sh -c` after that prefix (a resource limit, say).
fn install(home: &Path, ws: &Path, args: &[&str], path: &str, shell: Option<&str>) -> Output {
    let exe = env!("CARGO_BIN_EXE_tether");
    let mut command = match shell {
        Some(prefix) => {
            let mut c = Command::new("/bin/sh");
            c.arg("-c")
                .arg(format!("{prefix}; exec \"$0\" \"$@\""))
                .arg(exe);
            c
        }
        None => Command::new(exe),
    };
    command
        .args(["hook", "--install"])
        .args(args)
        .arg("--root")
        .arg(ws)
        .env("HOME", home)
        .env("CODEX_HOME", home.join(".codex"))
        .env("PATH", path)
        .output()
        .unwrap()
}

struct Place {
    _dir: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
}

fn place() -> Place {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    Place {
        home,
        ws,
        _dir: dir,
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_codex_config_missing_tethers_end_marker_is_refused_and_kept() {
    let p = place();
    let config = p.home.join(".codex/config.toml");
    let old = "model = \"o3\"\n# tether hooks: begin\n[[hooks.PreToolUse]]\nmatcher = \"x\"\n\n\
               [profiles.work]\nmodel = \"gpt-5.5\"\n[mcp_servers.docs]\ncommand = \"docs\"\n";
    std::fs::write(&config, old).unwrap();
    let out = install(&p.home, &p.ws, &["codex"], "/usr/bin:/bin", None);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("is on line 2 but `# tether hooks: end` is missing"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), old);
}

#[test]
fn a_full_disk_leaves_the_settings_file_whole() {
    let p = place();
    let settings = p.ws.join(".claude/settings.json");
    // Larger than the 1 KiB the write may grow a file to below.
    let old = format!(
        "{{\n  \"note\": \"{}\",\n  \"model\": \"opus\"\n}}\n",
        "x".repeat(4000)
    );
    std::fs::write(&settings, &old).unwrap();
    // The shell's file-size limit makes every write past 1 KiB fail, as a full disk would.
    let out = install(
        &p.home,
        &p.ws,
        &["claude"],
        "/usr/bin:/bin",
        Some("trap '' XFSZ; ulimit -f 1"),
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("it was left as it was"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), old);
    let leftovers: Vec<_> = std::fs::read_dir(p.ws.join(".claude"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["settings.json"], "a temporary file was left");
}

#[test]
fn a_settings_file_that_links_elsewhere_is_refused_unless_followed() {
    let p = place();
    let other = p.home.join("other-app.json");
    std::fs::write(&other, "{\"theme\": \"dark\"}\n").unwrap();
    let settings = p.ws.join(".claude/settings.json");
    std::os::unix::fs::symlink(&other, &settings).unwrap();
    let out = install(&p.home, &p.ws, &["claude"], "/usr/bin:/bin", None);
    assert!(!out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("is a symbolic link to") && said.contains("other-app.json"),
        "{said}"
    );
    assert!(said.contains("--follow"), "{said}");
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        "{\"theme\": \"dark\"}\n"
    );

    let out = install(
        &p.home,
        &p.ws,
        &["claude", "--follow"],
        "/usr/bin:/bin",
        None,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        std::fs::symlink_metadata(&settings)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link itself was replaced"
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&other).unwrap()).unwrap();
    assert_eq!(written["theme"], "dark");
    assert!(written["hooks"]["PostToolUse"].is_array(), "{written}");
}

#[test]
fn only_tethers_own_hooks_are_replaced_and_the_users_text_is_kept() {
    let p = place();
    let settings = p.ws.join(".claude/settings.json");
    let old = r#"{
  "cleanupPeriodDays": 123456789012345678901234567890,
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit",
        "hooks": [
          {"type": "command", "command": "my-formatter --check"},
          {"type": "command", "command": "/old/build/tether hook claude"}
        ]
      },
      {
        "matcher": "Write",
        "hooks": [{"type": "command", "command": "/opt/recorder hook claude"}]
      }
    ]
  }
}
"#;
    std::fs::write(&settings, old).unwrap();
    let out = install(&p.home, &p.ws, &["claude"], "/usr/bin:/bin", None);
    assert!(out.status.success(), "{}", text(&out));
    let new = std::fs::read_to_string(&settings).unwrap();
    assert!(
        new.contains("\"cleanupPeriodDays\": 123456789012345678901234567890,"),
        "{new}"
    );
    let parsed: Value = serde_json::from_str(&new).unwrap();
    let post = parsed["hooks"]["PostToolUse"].as_array().unwrap();
    let commands: Vec<&str> = post
        .iter()
        .flat_map(|g| g["hooks"].as_array().unwrap())
        .map(|h| h["command"].as_str().unwrap())
        .collect();
    let exe = env!("CARGO_BIN_EXE_tether");
    assert_eq!(
        commands,
        [
            "my-formatter --check".to_string(),
            "/opt/recorder hook claude".to_string(),
            format!("{exe} hook claude"),
        ]
    );
    // A second install finds nothing to change.
    let out = install(&p.home, &p.ws, &["claude"], "/usr/bin:/bin", None);
    assert!(
        text(&out).contains("already has tether's hooks"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), new);
}

#[test]
fn the_hooks_run_the_tether_on_path_when_it_is_the_same_program() {
    let p = place();
    let bin = p.home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_tether"), bin.join("tether")).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let out = install(&p.home, &p.ws, &["claude"], &path, None);
    assert!(out.status.success(), "{}", text(&out));
    let wanted = format!("{}/tether hook claude", bin.display());
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(p.ws.join(".claude/settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        wanted
    );
    assert!(
        text(&out).contains(&format!(
            "the hooks run {}/tether (the `tether` found on PATH)",
            bin.display()
        )),
        "{}",
        text(&out)
    );

    // Another program named tether on PATH is not taken for this one.
    std::fs::write(bin.join("tether"), "#!/bin/sh\n").unwrap();
    let out = install(&p.home, &p.ws, &["claude"], &path, None);
    assert!(
        text(&out).contains("the `tether` first on PATH is another program"),
        "{}",
        text(&out)
    );
}
