//! `tether hook` against events an agent may really send, and some it should not: every answer
//! fits the agent's schema for that event, a bad event never blocks the agent, the session
//! keeps its front end's surface, and the project is the edited file's, never `/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::host_env::{HostEnv, claude_event, context_after_shell, context_of, text};
use serde_json::{Value, json};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn an_event_tether_cannot_read_is_a_non_blocking_error_in_the_agents_form() {
    let env = HostEnv::new();
    // Not JSON, not an object, or more than tether reads: exit 1, which both agents show to
    // the user and go on from (2 would block the agent's turn).
    let huge = format!("{{\"pad\": \"{}\"}}", "x".repeat(100 << 20));
    for event in ["this is not json", "[1, 2]", huge.as_str()] {
        let out = env.run(&["hook", "claude"], event);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(text(&out).is_empty(), "{}", text(&out));
        assert!(
            stderr(&out).contains("nothing was checked"),
            "{}",
            stderr(&out)
        );
    }
    // A tool event missing what tether needs: the model is told the edit went unchecked.
    let post = json!({"hook_event_name": "PostToolUse", "tool_name": "Edit", "cwd": env.ws,
                      "tool_input": {"file_path": env.ws.join("a.py")}});
    let said = context_of(&env.run(&["hook", "claude"], &post.to_string()));
    let context = said["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("could not check this edit") && context.contains("session_id"),
        "{said}"
    );
    // Any other event missing it: a non-blocking error, no output the event cannot take.
    let stop = json!({"hook_event_name": "Stop", "cwd": env.ws});
    let out = env.run(&["hook", "claude"], &stop.to_string());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(text(&out).is_empty());
}

#[test]
fn stop_and_notification_get_nothing_their_schema_lacks_and_notices_wait() {
    let env = HostEnv::new();
    let file = env.ws.join("a.py");
    let pre = claude_event(
        &env,
        "PreToolUse",
        "Edit",
        "t1",
        json!({"file_path": file, "old_string": "x\n", "new_string": "x + 1\n"}),
    );
    context_of(&env.run(&["hook", "claude"], &pre));
    std::fs::write(&file, "def f(x: int) -> int:\n    return x + 1\n").unwrap();
    let post = pre.replace("PreToolUse", "PostToolUse");
    context_of(&env.run(&["hook", "claude"], &post));
    // An outside change the session's watch sees: a notice for the next tool event.
    std::fs::write(
        &file,
        "def f(x: int) -> int:\n    return x\n\nz: str = f(1)\n",
    )
    .unwrap();
    for name in ["Stop", "Notification", "UserPromptSubmit"] {
        let event = json!({"session_id": "session-1", "hook_event_name": name, "cwd": env.ws,
                           "message": "Claude needs your permission", "prompt": "go on"});
        let out = env.run(&["hook", "claude"], &event.to_string());
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(text(&out), "", "{name} got output its schema lacks");
    }
    let bash = claude_event(
        &env,
        "PostToolUse",
        "Bash",
        "b1",
        json!({"command": "true"}),
    );
    // A shell command's event waits until what changed on disk before it was read and
    // diagnosed, so the change is told now, with no time given to the watch.
    let said = context_of(&env.run(&["hook", "claude"], &bash));
    let context = said["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or("");
    assert!(context.contains("outside change to a.py"), "{said}");
}

#[test]
fn a_hook_session_keeps_its_front_ends_surface() {
    let env = HostEnv::new();
    let file = env.ws.join("a.py");
    let pre = claude_event(
        &env,
        "PreToolUse",
        "Edit",
        "t1",
        json!({"file_path": file, "old_string": "x", "new_string": "x"}),
    );
    let out = env.run_with(&["hook", "claude"], &pre, &[("TETHER_SURFACE", "plan")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(env.status()["hook_session_surfaces"], json!(["plan"]));
    let out = env.run(&["hook", "claude", "--surface", "readonly"], &pre);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        env.status()["hook_session_surfaces"],
        json!(["plan", "readonly"])
    );
}

#[test]
fn the_project_is_the_edited_files_never_the_filesystem_root() {
    let env = HostEnv::new();
    let file = env.ws.join("a.py");
    // The agent runs from `/`: the host serves the project that holds the file.
    let mut pre: Value = serde_json::from_str(&claude_event(
        &env,
        "PreToolUse",
        "Edit",
        "t1",
        json!({"file_path": file, "old_string": "x", "new_string": "x"}),
    ))
    .unwrap();
    pre["cwd"] = json!("/");
    let out = env.run(&["hook", "claude"], &pre.to_string());
    assert!(out.status.success(), "{}", stderr(&out));
    let root = env.status()["root"].as_str().unwrap_or("").to_string();
    assert_eq!(
        std::path::Path::new(&root),
        env.ws.canonicalize().unwrap(),
        "{root}"
    );
    // A file in no project is said to be unchecked, and no host of `/` starts.
    let post = json!({"session_id": "s", "hook_event_name": "PostToolUse", "cwd": "/",
                      "tool_name": "Write", "tool_use_id": "w",
                      "tool_input": {"file_path": "/etc/tether-test-none", "content": ""}});
    let said = context_of(&env.run(&["hook", "claude"], &post.to_string()));
    let context = said["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("is in no project") && context.contains("not checked"),
        "{said}"
    );
    let hosts = env.run(&["host", "--status", "--all"], "");
    assert!(!text(&hosts).contains("\"root\":\"/\""), "{}", text(&hosts));
}

#[test]
fn an_edit_outside_the_workspace_is_said_unchecked_with_or_without_its_pre_tool_use() {
    let env = HostEnv::new();
    let outside = tempfile::tempdir().unwrap();
    let file = outside.path().join("elsewhere.py");
    std::fs::write(&file, "x = 1\n").unwrap();
    let input = json!({"file_path": file, "old_string": "1", "new_string": "2"});
    let pre = claude_event(&env, "PreToolUse", "Edit", "t1", input.clone());
    let root = env.ws.to_string_lossy().to_string();
    context_of(&env.run(&["hook", "claude", "--root", &root], &pre));
    std::fs::write(&file, "x = 2\n").unwrap();
    let post = claude_event(&env, "PostToolUse", "Edit", "t1", input);
    let said = context_of(&env.run(&["hook", "claude", "--root", &root], &post));
    let context = said["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or("");
    assert!(
        context.contains("not checked") && context.contains("elsewhere.py"),
        "{said}"
    );
}

#[test]
fn an_edit_that_changed_nothing_leaves_the_file_watched() {
    let env = HostEnv::new();
    let file = env.ws.join("a.py");
    // The agent's Edit ran and changed nothing (its old text was its new text).
    let input = json!({"file_path": file, "old_string": "x", "new_string": "x"});
    let pre = claude_event(&env, "PreToolUse", "Edit", "t1", input.clone());
    context_of(&env.run(&["hook", "claude"], &pre));
    let post = claude_event(&env, "PostToolUse", "Edit", "t1", input);
    context_of(&env.run(&["hook", "claude"], &post));
    // A shell command then breaks the file: the watch must still tell it.
    std::fs::write(
        &file,
        "def f(x: int) -> int:\n    return x\n\nz: str = f(1)\n",
    )
    .unwrap();
    let context = context_after_shell(&env, 40);
    // The file is still watched: the change and its problem are told. Whether the problem is
    // called new depends on pyright having answered the Edit's baseline within the hook's
    // budget, which a cold server under load may not; then it is said to have no baseline.
    let told =
        context.contains("outside change to a.py") && context.contains("reportAssignmentType");
    let judged = context.contains("1 new problem") || context.contains("may predate this change");
    assert!(told && judged, "{context}");
}
