//! `tether install` against the real npm registry: each server lands in tether's own data
//! folder, a run finds it there (it is on no PATH), answers about a file and reports what a
//! write broke; and the faults: a registry that cannot be reached, a version it lacks, two
//! installs at once, an install cut off half-way, a module proxy this machine cannot reach.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

struct Env {
    _outer: tempfile::TempDir,
    ws: PathBuf,
    cfg: PathBuf,
    data: PathBuf,
}

fn env() -> Env {
    let outer = tempfile::tempdir().unwrap();
    let ws = outer.path().join("ws");
    let cfg = outer.path().join("cfg");
    let data = outer.path().join("data");
    std::fs::create_dir(&ws).unwrap();
    Env {
        ws,
        cfg,
        data,
        _outer: outer,
    }
}

fn command(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tether"));
    command
        .args(args)
        .current_dir(&env.ws)
        .env("TETHER_CONFIG_DIR", &env.cfg)
        .env("TETHER_DATA_DIR", &env.data)
        .env("TETHER_HOST", "off");
    for (k, v) in vars {
        command.env(k, v);
    }
    command
}

fn tether(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Output {
    command(env, args, vars)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Runs `calls` (`{"tool", "args"}` each) in one run with `call --stdin`; each result's line.
fn call_lines(env: &Env, calls: &[serde_json::Value]) -> Vec<String> {
    let mut child = command(env, &["call", "--stdin"], &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input: String = calls.iter().map(|c| format!("{c}\n")).collect();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// One language as its test drives it: the server to install, a file that parses, and a
/// text whose write the server must call a new problem (none for a server that reports none
/// without a helper program).
struct Case {
    server: &'static str,
    file: &'static str,
    /// Other files the project needs (a root marker).
    extra: &'static [(&'static str, &'static str)],
    good: &'static str,
    bad: Option<&'static str>,
    /// What the test asks about the good file.
    ask: Ask,
}

/// A question the server answers about the good file.
enum Ask {
    /// Its outline.
    Symbols,
    /// A hover over `symbol` on 1-based `line`, whose answer holds `expect`.
    Hover {
        line: u32,
        symbol: &'static str,
        expect: &'static str,
    },
}

const CASES: &[Case] = &[
    Case {
        server: "yaml-language-server",
        file: "config.yaml",
        extra: &[],
        good: "name: demo\nitems:\n  - one\n  - two\n",
        bad: Some("name: demo\nitems: [one, two\n"),
        ask: Ask::Symbols,
    },
    Case {
        server: "vscode-json-language-server",
        file: "data.json",
        extra: &[],
        good: "{\"name\": \"demo\", \"items\": [1, 2]}\n",
        bad: Some("{\"name\": \"demo\", \"items\": [1, 2}\n"),
        ask: Ask::Symbols,
    },
    Case {
        server: "vscode-css-language-server",
        file: "site.css",
        extra: &[],
        good: "body {\n  color: red;\n}\n",
        bad: Some("body {\n  color: red;\n  margin 0;\n}\n"),
        ask: Ask::Symbols,
    },
    Case {
        server: "bash-language-server",
        file: "run.sh",
        extra: &[],
        good: "#!/bin/sh\ngreet() {\n  echo hi\n}\ngreet\n",
        bad: None,
        ask: Ask::Symbols,
    },
    Case {
        server: "vscode-html-language-server",
        file: "index.html",
        extra: &[],
        good: "<!doctype html>\n<html><body><p id=\"greeting\">hi</p></body></html>\n",
        bad: None,
        ask: Ask::Symbols,
    },
    Case {
        server: "docker-langserver",
        file: "Dockerfile",
        extra: &[],
        good: "FROM alpine:3\nRUN echo hi\n",
        bad: Some("FROM alpine:3\nRUNN echo hi\n"),
        ask: Ask::Symbols,
    },
    Case {
        server: "intelephense",
        file: "index.php",
        extra: &[],
        good: "<?php\nfunction greet(string $name): string {\n    return \"hi \" . $name;\n}\n",
        bad: Some("<?php\nfunction greet(string $name): string {\n    return \"hi \" . $name\n}\n"),
        ask: Ask::Symbols,
    },
    Case {
        server: "fortls",
        file: "hello.f90",
        extra: &[],
        good: "program hello\n  implicit none\n  print *, 'hi'\nend program hello\n",
        bad: None,
        ask: Ask::Symbols,
    },
    Case {
        server: "basedpyright",
        file: "app.py",
        extra: &[(
            "pyproject.toml",
            "[project]\nname = \"demo\"\nversion = \"0.1\"\n",
        )],
        good: "def greet(name: str) -> str:\n    return 'hi ' + name\n",
        bad: Some("def greet(name: str) -> str:\n    return 1\n"),
        ask: Ask::Symbols,
    },
    Case {
        server: "tombi",
        file: "config.toml",
        extra: &[],
        good: "[tool]\nname = \"demo\"\n",
        bad: Some("[tool]\nname = \n"),
        ask: Ask::Symbols,
    },
    Case {
        server: "just-lsp",
        file: "justfile",
        extra: &[],
        good: "build:\n    echo hi\n\ntest: build\n    echo t\n",
        bad: Some("build:\n    echo hi\n\ntest: buidl\n    echo t\n"),
        ask: Ask::Symbols,
    },
    Case {
        server: "prisma-language-server",
        file: "schema.prisma",
        extra: &[],
        good: "datasource db {\n  provider = \"sqlite\"\n}\n\nmodel User {\n  id   Int    @id\n  name String\n}\n",
        bad: Some(
            "datasource db {\n  provider = \"sqlite\"\n}\n\nmodel User {\n  id   Int    @id\n  name Strin\n}\n",
        ),
        ask: Ask::Symbols,
    },
    Case {
        server: "svelteserver",
        file: "App.svelte",
        extra: &[],
        good: "<script>\n  let count = 0;\n</script>\n<button on:click={() => count++}>{count}</button>\n",
        bad: Some(
            "<script>\n  let count = 0;\n</script>\n<button on:click={() => count++}>{count}</button>\n{#if count}\n<p>x</p>\n",
        ),
        ask: Ask::Symbols,
    },
    Case {
        server: "vim-language-server",
        file: "init.vim",
        extra: &[],
        good: "function! Greet()\n  echo \"hi\"\nendfunction\n",
        bad: Some("function! Greet()\n  echo \"hi\"\nendfunction\nif 1\n  echo 2\n"),
        ask: Ask::Symbols,
    },
    Case {
        server: "tsp-server",
        file: "main.tsp",
        extra: &[],
        good: "model Pet {\n  name: string;\n  age: int32;\n}\n",
        bad: Some("model Pet {\n  name: string;\n  age: int33;\n}\n"),
        ask: Ask::Symbols,
    },
    Case {
        server: "graphql-lsp",
        file: "query.graphql",
        extra: &[
            (
                ".graphqlrc.yml",
                "schema: schema.graphql\ndocuments: \"query.graphql\"\n",
            ),
            ("schema.graphql", "type Query {\n  hello: String\n}\n"),
        ],
        good: "query Greeting {\n  hello\n}\n",
        bad: Some("query Greeting {\n  helo\n}\n"),
        ask: Ask::Symbols,
    },
    Case {
        server: "buf",
        file: "pet.proto",
        extra: &[],
        good: "syntax = \"proto3\";\npackage demo;\n\nmessage Pet {\n  string name = 1;\n  int32 age = 2;\n}\n",
        bad: Some(
            "syntax = \"proto3\";\npackage demo;\n\nmessage Pet {\n  string name = 1;\n  Strin age = 2;\n}\n",
        ),
        ask: Ask::Symbols,
    },
    Case {
        server: "robotframework_ls",
        file: "greet.robot",
        extra: &[],
        good: "*** Test Cases ***\nGreet\n    Log    hi\n",
        bad: Some("*** Test Cases ***\nGreet\n    Log    hi\n    No Such Keyword\n"),
        ask: Ask::Symbols,
    },
    Case {
        server: "systemd-language-server",
        file: "demo.service",
        extra: &[],
        good: "[Unit]\nDescription=demo\n\n[Service]\nExecStart=/bin/true\n",
        bad: None,
        ask: Ask::Hover {
            line: 5,
            symbol: "ExecStart",
            expect: "Commands that are executed",
        },
    },
    Case {
        server: "nginx-language-server",
        file: "nginx.conf",
        extra: &[],
        good: "http {\n  server {\n    listen 80;\n  }\n}\n",
        bad: None,
        ask: Ask::Hover {
            line: 3,
            symbol: "listen",
            expect: "Sets the address and port",
        },
    },
    Case {
        server: "astro-ls",
        file: "index.astro",
        extra: &[(
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true}}\n",
        )],
        good: "---\nconst name: string = \"demo\";\n---\n<h1>{name}</h1>\n",
        bad: Some("---\nconst name: string = 1;\n---\n<h1>{name}</h1>\n"),
        ask: Ask::Symbols,
    },
    Case {
        server: "mdx-language-server",
        file: "doc.mdx",
        extra: &[],
        good: "# Hello\n\nexport const greeting = 'hi'\n\n{greeting}\n",
        bad: Some("# Hello\n\nexport const greeting = 'hi'\n\n{greeting +}\n"),
        ask: Ask::Symbols,
    },
    Case {
        server: "perl-language-server",
        file: "greet.pl",
        extra: &[],
        good: "use strict;\nuse warnings;\n\nsub greet {\n    my ($name) = @_;\n    return \"hi $name\";\n}\n",
        bad: None,
        ask: Ask::Symbols,
    },
];

/// The servers the catalog marks as reporting no problems.
const NO_PROBLEMS: [&str; 3] = [
    "perl-language-server",
    "systemd-language-server",
    "nginx-language-server",
];

/// Which cases run: all with `TETHER_LANGUAGES=all` (`scripts/test --languages all`), else
/// a fixed sample.
fn cases() -> Vec<&'static Case> {
    let sample = [
        "yaml-language-server",
        "vscode-json-language-server",
        "docker-langserver",
        "intelephense",
        "fortls",
    ];
    match std::env::var("TETHER_LANGUAGES").as_deref() {
        Ok("all") => CASES.iter().collect(),
        // A list of servers, for one at a time.
        Ok(some) if !some.is_empty() && some != "sample" => CASES
            .iter()
            .filter(|c| some.split(',').any(|s| s == c.server))
            .collect(),
        _ => CASES
            .iter()
            .filter(|c| sample.contains(&c.server))
            .collect(),
    }
}

#[test]
fn each_installed_server_is_found_answers_and_reports_a_write() {
    // Every case runs, and the matrix is printed whole, before any failure is told.
    let mut failed = Vec::new();
    eprintln!("| server | install | answered | write |");
    for case in cases() {
        match drive(case) {
            Ok(took) => eprintln!(
                "| {} | {:.1} s | yes | {} |",
                case.server,
                took.as_secs_f64(),
                if case.bad.is_some() {
                    "new problem told"
                } else {
                    "reports none"
                }
            ),
            Err(why) => {
                eprintln!("| {} | failed | | |", case.server);
                failed.push(why);
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// Installs one case's server, asks about its good file and writes its bad one; how long the
/// install took, or what went wrong.
fn drive(case: &Case) -> Result<Duration, String> {
    let env = env();
    let server = case.server;
    let started = Instant::now();
    // A server from Debian's archive installs system-wide, only when asked to.
    let system = server == "perl-language-server";
    let args: &[&str] = match system {
        true => &["install", server, "--system"],
        false => &["install", server],
    };
    let out = tether(&env, args, &[]);
    let took = started.elapsed();
    if !out.status.success() {
        return Err(format!("{server}: {}", text(&out)));
    }
    let listed = text(&tether(&env, &["install", "--list"], &[]));
    let line = listed
        .lines()
        .find(|l| l.starts_with(&format!("{server}:")))
        .unwrap_or_default();
    let home = match system {
        true => "/usr/bin".to_string(),
        false => env.data.display().to_string(),
    };
    if !(line.contains("installed in") && line.contains(&home)) {
        return Err(format!("{server}: not listed as installed: {listed}"));
    }
    for (path, text) in case.extra {
        std::fs::write(env.ws.join(path), text).unwrap();
    }
    std::fs::write(env.ws.join(case.file), case.good).unwrap();
    let (question, expect) = match case.ask {
        Ask::Symbols => (
            serde_json::json!({"action": "symbols", "file": case.file}),
            format!("outline of {}", case.file),
        ),
        Ask::Hover {
            line,
            symbol,
            expect,
        } => (
            serde_json::json!({"action": "hover", "file": case.file, "line": line, "symbol": symbol}),
            expect.to_string(),
        ),
    };
    // The question and the write in one run, as an agent makes them: the server is warm
    // when the file is written, so what the file had before is known.
    // A language with no problems to report gets a harmless write: its answer must say so,
    // never promise a report that will not come.
    let written = case
        .bad
        .map_or_else(|| format!("{}\n", case.good), str::to_string);
    let calls = [
        serde_json::json!({"tool": "lsp", "args": question}),
        serde_json::json!({"tool": "write", "args": {"path": case.file, "content": written}}),
    ];
    let results = call_lines(&env, &calls);
    let answered = results.first().cloned().unwrap_or_default();
    if !answered.contains(&expect) {
        return Err(format!("{server}: asked {question}: {answered}"));
    }
    if case.bad.is_none() {
        let wrote = results.get(1).cloned().unwrap_or_default();
        let says_none = wrote.contains(&format!("not checked: {server} reports no problems"));
        if wrote.contains("pending") || (NO_PROBLEMS.contains(&server) && !says_none) {
            return Err(format!("{server}: a write it cannot check: {wrote}"));
        }
        return Ok(took);
    }
    let wrote = results.get(1).cloned().unwrap_or_default();
    let file = case.file;
    if !(wrote.contains(&format!("{file}: 1 new problem"))
        || wrote.contains(&format!("{file}: 2 new problems"))
        || wrote.contains("new problems"))
    {
        let status = text(&tether(
            &env,
            &["call", "lsp", r#"{"action": "status"}"#],
            &[],
        ));
        return Err(format!(
            "{server}: the write was not told as new problems: {wrote}\n{status}"
        ));
    }
    Ok(took)
}

#[test]
fn a_registry_that_cannot_be_reached_and_a_version_it_lacks_are_said_and_nothing_is_kept() {
    let env = env();
    // npm retries a refused connection for about a minute by default; once is enough here.
    let unreachable = [
        ("npm_config_registry", "http://127.0.0.1:9/"),
        ("npm_config_fetch_retries", "0"),
    ];
    // `yml`, a file extension, names YAML's server.
    let out = tether(&env, &["install", "yml"], &unreachable);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains(
            "the npm registry could not be reached, so yaml-language-server was not installed"
        ),
        "{}",
        text(&out)
    );
    let out = tether(
        &env,
        &["install", "yaml-language-server", "--version", "0.0.999"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("the npm registry has no yaml-language-server 0.0.999"),
        "{}",
        text(&out)
    );
    let listed = text(&tether(&env, &["install", "--list"], &[]));
    assert!(
        listed.contains("yaml-language-server: not installed"),
        "{listed}"
    );
    assert!(
        !env.data
            .join("servers/yaml-language-server/0.0.999")
            .exists()
    );
    // A name tether has no recipe for names the ones it has.
    let out = tether(&env, &["install", "yml-server"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("no recipe for `yml-server`")
            && text(&out).contains("yaml-language-server"),
        "{}",
        text(&out)
    );
}

#[test]
fn gopls_from_a_module_proxy_this_machine_cannot_reach_is_a_clear_failure() {
    let env = env();
    let out = tether(&env, &["install", "gopls"], &[("GOPROXY", "off")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("could not be reached") || said.contains("go is not on PATH"),
        "{said}"
    );
    assert!(!said.contains("installed in"), "{said}");
}

#[test]
fn two_installs_at_once_install_once_and_a_cut_off_install_is_never_found() {
    let env = env();
    // Cut off: the installer is killed with tether once it has begun.
    let mut cut = command(&env, &["install", "bash-language-server"], &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let home = env.data.join("servers/bash-language-server");
    let end = Instant::now() + Duration::from_secs(60);
    while !home.exists() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    cut.kill().unwrap();
    cut.wait().unwrap();
    let listed = text(&tether(&env, &["install", "--list"], &[]));
    assert!(
        listed.contains("bash-language-server: not installed"),
        "{listed}"
    );
    // Two at once: one installs, the other waits for it and finds it done.
    let spawn = || {
        command(&env, &["install", "bash-language-server"], &[])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(
        a.status.success() && b.status.success(),
        "{}\n{}",
        text(&a),
        text(&b)
    );
    let both = format!("{}\n{}", text(&a), text(&b));
    assert_eq!(
        both.matches("tether: installing bash-language-server")
            .count(),
        1,
        "{both}"
    );
    assert!(both.contains("waiting for it"), "{both}");
    let record = std::fs::read_to_string(env.data.join("servers/installed.toml")).unwrap();
    assert_eq!(
        record.matches("[bash-language-server]").count(),
        1,
        "{record}"
    );
    // Removed, it is gone from the record and the disk.
    let out = tether(&env, &["uninstall", "bash-language-server"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!home.exists());
    let _ = Path::new("");
}

#[test]
fn for_workspace_installs_what_its_files_need_and_update_moves_to_the_pinned_version() {
    let env = env();
    std::fs::write(env.ws.join("ci.yml"), "on: [push]\n").unwrap();
    std::fs::write(env.ws.join("Dockerfile"), "FROM alpine:3\n").unwrap();
    let out = tether(&env, &["install", "--for-workspace"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let listed = text(&tether(&env, &["install", "--list"], &[]));
    for server in ["yaml-language-server", "docker-langserver"] {
        assert!(
            listed.contains(&format!("{server}: "))
                && !listed.contains(&format!("{server}: not installed")),
            "{listed}"
        );
    }
    // Nothing else the workspace has no file of.
    assert!(listed.contains("intelephense: not installed"), "{listed}");
    // Nothing left to install: said, not done again.
    let again = text(&tether(&env, &["install", "--for-workspace"], &[]));
    assert!(again.contains("nothing to install"), "{again}");
    // An older version, then --update: the pinned one replaces it, and the old folder goes.
    let old = tether(&env, &["install", "yaml", "--version", "1.15.0"], &[]);
    assert!(old.status.success(), "{}", text(&old));
    let listed = text(&tether(&env, &["install", "--list"], &[]));
    assert!(
        listed.contains("yaml-language-server 1.15.0 installed")
            && listed.contains("is pinned now"),
        "{listed}"
    );
    let updated = tether(&env, &["install", "--update"], &[]);
    assert!(updated.status.success(), "{}", text(&updated));
    let listed = text(&tether(&env, &["install", "--list"], &[]));
    assert!(
        listed.contains("yaml-language-server 2.0.0 installed"),
        "{listed}"
    );
    assert!(
        !env.data
            .join("servers/yaml-language-server/1.15.0")
            .exists()
    );
    let none = text(&tether(&env, &["install", "--update"], &[]));
    assert!(
        none.contains("every installed server is at its pinned version"),
        "{none}"
    );
}

#[test]
fn a_disk_that_fills_is_said_and_nothing_of_the_install_is_kept() {
    let env = env();
    // A data folder on a file system of 1 MB: yaml-language-server's files are about 15 MB.
    std::fs::create_dir(&env.data).unwrap();
    let data = env.data.display().to_string();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs", &data])
        .output()
        .unwrap();
    assert!(
        mounted.status.success(),
        "this test mounts a small tmpfs and needs root (CI runs as root): {}",
        text(&mounted)
    );
    let out = tether(&env, &["install", "yaml-language-server"], &[]);
    let listed = text(&tether(&env, &["install", "--list"], &[]));
    let left = std::fs::read_dir(env.data.join("servers"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect::<Vec<_>>())
        .unwrap_or_default();
    let unmounted = Command::new("umount").arg(&data).output().unwrap();
    assert!(unmounted.status.success(), "{}", text(&unmounted));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("is full, so yaml-language-server was not installed"),
        "{}",
        text(&out)
    );
    assert!(
        listed.contains("yaml-language-server: not installed"),
        "{listed}"
    );
    // Only the lock file: no half-installed server folder, no record.
    assert!(left.iter().all(|name| name == ".install.lock"), "{left:?}");
}

#[test]
fn a_server_only_debians_archive_has_installs_only_with_system() {
    let env = env();
    let out = tether(&env, &["install", "perl"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("installs system-wide with apt-get")
            && text(&out).contains("give --system"),
        "{}",
        text(&out)
    );
    std::fs::write(env.ws.join("greet.pl"), "print 1;\n").unwrap();
    let out = tether(&env, &["install", "--for-workspace"], &[]);
    let said = text(&out);
    assert!(
        said.contains("perl-language-server: left out") || said.contains("nothing to install"),
        "{said}"
    );
    assert!(!said.contains("installing perl-language-server"), "{said}");
}

#[test]
fn debians_archive_that_cannot_be_reached_is_said_not_taken_for_a_missing_package() {
    let env = env();
    // apt-get reads this file instead of /etc/apt/apt.conf: every fetch goes through a proxy
    // nothing listens on, and the package lists are an empty folder of the test's own, so
    // apt-get update only warns and the install then finds no package.
    let lists = env.ws.join("apt-lists");
    std::fs::create_dir_all(lists.join("partial")).unwrap();
    let conf = env.ws.join("apt.conf");
    std::fs::write(
        &conf,
        format!(
            "Acquire::http::Proxy \"http://127.0.0.1:9/\";\n\
             Acquire::https::Proxy \"http://127.0.0.1:9/\";\n\
             Dir::State::Lists \"{}\";\n",
            lists.display()
        ),
    )
    .unwrap();
    let conf = conf.display().to_string();
    // A server of the user's catalog whose Debian package is not on this machine (a package
    // already installed would need no fetch).
    let absent = Command::new("dpkg")
        .args(["-s", "figlet"])
        .output()
        .unwrap();
    assert!(
        !absent.status.success(),
        "figlet is installed here: remove it to run this test"
    );
    std::fs::create_dir_all(&env.cfg).unwrap();
    let entry = "[lsp.servers.banner-ls]\ncommand = [\"figlet\"]\n\
                 install = { from = \"apt\", package = \"figlet\", version = \"2.2.5-3+b1\" }\n\
                 [lsp.languages.banner]\nextensions = [\"banner\"]\nservers = [\"banner-ls\"]\n";
    std::fs::write(env.cfg.join("tether.toml"), entry).unwrap();
    let out = tether(
        &env,
        &["install", "banner-ls", "--system"],
        &[("APT_CONFIG", &conf)],
    );
    let said = text(&out);
    if said.contains("needs root") {
        panic!("this test runs apt-get and needs root or sudo (CI runs as root): {said}");
    }
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("the apt registry could not be reached, so figlet was not installed"),
        "{said}"
    );
    // apt-get update's own warning is quoted.
    assert!(said.contains("127.0.0.1:9"), "{said}");
    assert!(!said.contains("has no figlet"), "{said}");
    let listed = text(&tether(&env, &["install", "--list"], &[]));
    assert!(listed.contains("banner-ls: not installed"), "{listed}");
}

#[test]
fn auto_install_installs_a_missing_server_on_first_need_and_a_workspace_cannot_turn_it_on() {
    let env = env();
    std::fs::write(env.ws.join("config.yaml"), "name: demo\n").unwrap();
    let symbols = serde_json::json!({"action": "symbols", "file": "config.yaml"});
    // A workspace's own file may not turn it on: it would have this machine fetch and run a
    // registry's code.
    std::fs::write(env.ws.join("tether.toml"), "[lsp]\nauto_install = true\n").unwrap();
    let refused = text(&tether(&env, &["call", "lsp", &symbols.to_string()], &[]));
    assert!(
        refused.contains("tether install yaml-language-server") || refused.contains("auto_install"),
        "{refused}"
    );
    assert!(
        !env.data.join("servers/installed.toml").exists(),
        "{refused}"
    );
    std::fs::remove_file(env.ws.join("tether.toml")).unwrap();
    // The user's own file may.
    std::fs::create_dir_all(&env.cfg).unwrap();
    // Each request may take 1 s: the install (seconds from npm) outlasts it.
    let user = "[lsp]\nauto_install = true\nrequest_timeout_s = 1\n";
    std::fs::write(env.cfg.join("tether.toml"), user).unwrap();
    let bad = "name: demo\nitems: [one, two\n";
    // A cell that waits until the install is recorded, so the calls after it find it done.
    let record = env.data.join("servers/installed.toml");
    let wait = format!(
        "import time, pathlib\nend = time.time() + 240\nwhile time.time() < end and \
         'yaml-language-server' not in (pathlib.Path({:?}).read_text() if \
         pathlib.Path({:?}).exists() else ''):\n    time.sleep(0.2)\ntime.sleep(3)\nprint('waited')",
        record.display().to_string(),
        record.display().to_string()
    );
    // The question begins the install (seconds from npm) and is answered pending within its
    // 1 s; the cell waits for the record; the write then finds the server running.
    let calls = [
        serde_json::json!({"tool": "lsp", "args": symbols}),
        serde_json::json!({"tool": "eval", "args": {"language": "python", "code": wait,
                           "description": "wait for the install to be recorded"}}),
        serde_json::json!({"tool": "write", "args": {"path": "config.yaml", "content": bad}}),
        serde_json::json!({"tool": "lsp", "args": symbols}),
    ];
    let results = call_lines(&env, &calls);
    let asked = results.first().cloned().unwrap_or_default();
    assert!(
        asked.contains("pending: yaml-language-server is being installed for yaml")
            && asked.contains("a notice on a later result says when it is done"),
        "{results:?}"
    );
    // A later result says the install ended.
    let later = results[1..3].join("\n");
    assert!(
        later.contains(
            "yaml-language-server is installed for yaml (`[lsp] auto_install`) and runs now"
        ),
        "{results:?}"
    );
    let wrote = results.get(2).cloned().unwrap_or_default();
    assert!(wrote.contains("config.yaml: 1 new problem"), "{results:?}");
    let asked = results.get(3).cloned().unwrap_or_default();
    assert!(asked.contains("outline of config.yaml"), "{results:?}");
    let listed = text(&tether(&env, &["install", "--list"], &[]));
    assert!(
        listed.contains("yaml-language-server: yaml-language-server 2.0.0 installed in"),
        "{listed}"
    );
}

#[test]
fn ruff_beside_pyright_reports_its_own_findings_once_each_under_its_name() {
    let env = env();
    let pyproject = "[project]\nname = \"demo\"\nversion = \"0.1\"\n";
    std::fs::write(env.ws.join("pyproject.toml"), pyproject).unwrap();
    let clean = "def greet(name: str) -> str:\n    return 'hi ' + name\n";
    std::fs::write(env.ws.join("app.py"), clean).unwrap();
    // What a Python workspace needs includes the server run beside its type checker.
    let out = tether(&env, &["install", "--for-workspace"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let listed = text(&tether(&env, &["install", "--list"], &[]));
    assert!(
        listed.contains("ruff: ruff 0.17.6 installed in") && listed.contains("[beside python]"),
        "{listed}"
    );
    // An unused import is ruff's finding; a wrong return type is the type checker's.
    let broken = "import os\n\n\ndef greet(name: str) -> str:\n    return 1\n";
    let hover =
        serde_json::json!({"action": "hover", "file": "app.py", "line": 1, "symbol": "greet"});
    let calls = [
        serde_json::json!({"tool": "lsp", "args": hover}),
        serde_json::json!({"tool": "write", "args": {"path": "app.py", "content": broken}}),
        serde_json::json!({"tool": "lsp", "args": {"action": "diagnostics", "file": "app.py"}}),
        serde_json::json!({"tool": "lsp", "args": {"action": "status"}}),
    ];
    let results = call_lines(&env, &calls);
    // Asked, the file's diagnostics hold both servers' findings, each under its server.
    let asked = results.get(2).cloned().unwrap_or_default();
    assert!(
        asked.contains("reportReturnType")
            && asked.contains("ruff (run beside the chosen server) says:")
            && asked.contains("[F401] (Ruff)"),
        "{results:?}"
    );
    // doctor names the copy that runs.
    let doctor = text(&tether(&env, &["doctor"], &[]));
    let ruff = doctor
        .lines()
        .find(|l| l.trim_start().starts_with("ruff "))
        .unwrap_or_default();
    assert!(
        ruff.contains("installed by tether:") && ruff.contains("(beside python)"),
        "{doctor}"
    );
    let status = results.get(3).cloned().unwrap_or_default();
    assert!(
        status.contains("beside the chosen server: ruff for ."),
        "{results:?}"
    );
    let wrote: serde_json::Value =
        serde_json::from_str(results.get(1).map_or("", String::as_str)).unwrap_or_default();
    let wrote = wrote["text"].as_str().unwrap_or_default().to_string();
    let checker = ["basedpyright", "pyright"]
        .into_iter()
        .find(|c| wrote.contains(&format!("diagnostics ({c}) after this write:")));
    assert!(checker.is_some(), "{wrote}\n{results:?}");
    let ruff_block = wrote
        .split("diagnostics (ruff) after this write:")
        .nth(1)
        .unwrap_or_else(|| panic!("no report of ruff's: {wrote}\n{results:?}"));
    assert!(ruff_block.contains("app.py: 1 new problem"), "{wrote}");
    assert!(ruff_block.contains("F401"), "{wrote}");
    // Each finding once, under its own server.
    assert_eq!(wrote.matches("F401").count(), 1, "{wrote}");
    assert_eq!(wrote.matches("reportReturnType").count(), 1, "{wrote}");
    let checker_block = wrote.split("diagnostics (ruff)").next().unwrap_or_default();
    assert!(checker_block.contains("reportReturnType"), "{wrote}");

    // The fixes of both servers are listed together, each under its server, and ruff's is
    // applied through the door with both servers' reports.
    let calls = [
        serde_json::json!({"tool": "lsp", "args": {"action": "code_actions", "file": "app.py"}}),
        serde_json::json!({"tool": "lsp_fix", "args": {"file": "app.py", "action": "remove unused import"}}),
    ];
    let results = call_lines(&env, &calls);
    let listed = results.first().cloned().unwrap_or_default();
    assert!(
        listed.contains("Remove unused import: `os`") && listed.contains("offered by"),
        "{results:?}"
    );
    let fixed = results.get(1).cloned().unwrap_or_default();
    assert!(
        fixed.contains("applied `Ruff (F401): Remove unused import: `os`` (ruff)"),
        "{results:?}"
    );
    let ruff_after = fixed
        .split("diagnostics (ruff) after this write:")
        .nth(1)
        .unwrap_or_default();
    assert!(ruff_after.contains("fixed 1 problem"), "{results:?}");
    let now = std::fs::read_to_string(env.ws.join("app.py")).unwrap();
    assert!(!now.contains("import os"), "{now}");
}

#[test]
fn debugpy_installed_by_tether_debugs_a_program_whose_python_lacks_it() {
    let env = env();
    let out = tether(&env, &["install", "debugpy"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    // The project's own interpreter, without debugpy: the program runs on it, the adapter on
    // tether's copy.
    let venv = Command::new("python3")
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(&env.ws)
        .output()
        .unwrap();
    assert!(venv.status.success(), "{}", text(&venv));
    std::fs::write(
        env.ws.join("pyproject.toml"),
        "[project]\nname = \"demo\"\nversion = \"0.1\"\n",
    )
    .unwrap();
    let program =
        "import sys\n\n\ndef main():\n    where = sys.prefix\n    return where\n\n\nmain()\n";
    std::fs::write(env.ws.join("app.py"), program).unwrap();
    let calls = [
        serde_json::json!({"tool": "debug", "args": {"action": "breakpoints", "file": "app.py", "lines": [6]}}),
        serde_json::json!({"tool": "debug", "args": {"action": "launch", "program": "app.py"}}),
        serde_json::json!({"tool": "debug", "args": {"action": "terminate"}}),
    ];
    let results = call_lines(&env, &calls);
    let launched = results.get(1).cloned().unwrap_or_default();
    assert!(
        launched.contains("tether's own adapter runs")
            && launched.contains(&env.data.display().to_string()),
        "{results:?}"
    );
    assert!(launched.contains("stopped: breakpoint"), "{results:?}");
    // The program ran on the project's interpreter.
    assert!(launched.contains(".venv"), "{results:?}");
}

#[test]
fn a_package_that_fails_to_build_is_said_with_the_installers_words_and_nothing_is_kept() {
    let env = env();
    // A server of the user's own catalog whose package has no wheel for this Python and whose
    // build needs cairo's headers, which pkg-config is kept from finding.
    std::fs::create_dir_all(&env.cfg).unwrap();
    let entry = "[lsp.servers.cairo-ls]\ncommand = [\"cairo-ls\"]\n\
                 install = { from = \"pip\", package = \"pycairo\", version = \"1.20.0\" }\n\
                 [lsp.languages.cairo]\nextensions = [\"cairo\"]\nservers = [\"cairo-ls\"]\n";
    std::fs::write(env.cfg.join("tether.toml"), entry).unwrap();
    let no_headers = [
        ("PKG_CONFIG_PATH", "/nonexistent"),
        ("PKG_CONFIG_LIBDIR", "/nonexistent"),
    ];
    let out = tether(&env, &["install", "cairo-ls"], &no_headers);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("failed, so pycairo was not installed (nothing of it was kept)")
            && said.contains("pip install"),
        "{said}"
    );
    // The installer's own last words are quoted.
    assert!(said.to_lowercase().contains("cairo"), "{said}");
    let listed = text(&tether(&env, &["install", "--list"], &[]));
    assert!(listed.contains("cairo-ls: not installed"), "{listed}");
    assert!(!env.data.join("servers/cairo-ls").exists());
}
