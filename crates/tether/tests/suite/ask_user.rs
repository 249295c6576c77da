//! `ask_user` and the approval gate through a scripted port: what the model reads for an
//! answer, several choices, typed text, a skip (and one too fast to be a person's), a timeout
//! and nobody to ask; cards that break the rules; the tool hidden while no port exists; and a
//! write from inside an `eval` cell going through the same approval card.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tether::{Outcome, RunBuilder, ScriptedPort};

fn run_with(dir: &std::path::Path, config: &str, port: Option<Arc<ScriptedPort>>) -> tether::Run {
    let cfg = dir.join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("tether.toml"), config).unwrap();
    std::fs::create_dir_all(dir.join("ws")).unwrap();
    let mut builder = RunBuilder::new(dir.join("ws"))
        .user_config_dir(&cfg)
        .state_dir(dir.join("state"));
    if let Some(port) = port {
        builder = builder.question_port(port);
    }
    builder.build().unwrap()
}

fn answer(chosen: &[usize], text: Option<&str>) -> Outcome {
    Outcome::Answered {
        chosen: chosen.to_vec(),
        text: text.map(str::to_string),
    }
}

#[tokio::test]
async fn what_the_model_reads_for_each_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let port = Arc::new(ScriptedPort::new([
        answer(&[1], None),
        answer(&[0, 2], None),
        answer(&[], Some("use the staging bucket")),
        Outcome::Skipped {
            cancelled: false,
            hasty: true,
        },
        Outcome::Skipped {
            cancelled: true,
            hasty: false,
        },
        Outcome::TimedOut,
    ]));
    let run = run_with(dir.path(), "[ask]\ntimeout_s = 60\n", Some(port.clone()));
    let names = common::agent_tools(&run);
    assert!(names.contains(&"ask_user".to_string()), "{names:?}");
    let ask = |args| common::call_text(&run, "ask_user", args);
    let db = json!({"question": "Which database?", "context": "I will assume Postgres.",
                    "options": [{"label": "Postgres"}, {"label": "SQLite", "description": "one file"}]});

    let one = ask(db.clone()).await;
    assert_eq!(
        one,
        "the human answered \"Which database?\":\nchose 2. \"SQLite\""
    );
    let shown = &port.shown()[0];
    assert_eq!(shown.options[1].description.as_deref(), Some("one file"));
    assert!(
        !shown.allow_free_text,
        "options given: free text stays off unless asked for"
    );

    let many = ask(json!({"question": "Which checks?", "multi_select": true,
        "options": [{"label": "lint"}, {"label": "types"}, {"label": "tests"}]}))
    .await;
    assert!(
        many.ends_with("chose [1. \"lint\", 3. \"tests\"]"),
        "{many}"
    );

    let typed = ask(json!({"question": "Where should uploads go?"})).await;
    assert!(
        typed.ends_with("wrote: \"use the staging bucket\""),
        "{typed}"
    );
    assert!(
        port.shown()[2].allow_free_text,
        "no options: a typed answer is the default"
    );

    let skipped = ask(db.clone()).await;
    assert!(
        skipped.starts_with(
            "the human skipped this question: go on with your stated assumption \
                             and do not ask it again"
        ),
        "{skipped}"
    );
    // A port that saw the decline come back faster than a person reads says so.
    assert!(
        skipped.contains("the client rather than a person may have declined it"),
        "{skipped}"
    );
    let cancelled = ask(db.clone()).await;
    assert!(cancelled.contains("cancelled, not declined"), "{cancelled}");

    let late = ask(db.clone()).await;
    assert!(
        late.starts_with("ERROR") && late.contains("no answer came within 60 s: go on"),
        "{late}"
    );

    // The script has no more answers: nobody to ask, said at once with the card as text.
    let nobody = ask(db.clone()).await;
    assert!(
        nobody.starts_with("ERROR")
            && nobody.contains(
                "Put this question to the user in your own reply, and do not assume an answer"
            )
            && nobody.contains("  2. SQLite: one file"),
        "{nobody}"
    );
    run.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn cards_that_break_the_rules_say_what_to_change_and_ask_nobody() {
    let dir = tempfile::tempdir().unwrap();
    let port = Arc::new(ScriptedPort::new([]));
    let run = run_with(dir.path(), "", Some(port.clone()));
    let ask = |args| common::call_text(&run, "ask_user", args);
    let seven: Vec<_> = (1..=7)
        .map(|n| json!({"label": format!("choice {n}")}))
        .collect();
    assert!(
        ask(json!({"question": "Pick", "options": seven}))
            .await
            .contains("at most 6")
    );
    let long = "x".repeat(61);
    let said = ask(json!({"question": "Pick", "options": [{"label": long}]})).await;
    assert!(said.contains("put the rest in its `description`"), "{said}");
    let said = ask(json!({"question": "Pick", "allow_free_text": false})).await;
    assert!(said.contains("set `allow_free_text: true`"), "{said}");
    assert!(port.shown().is_empty(), "a bad card was shown");
    run.shutdown(Duration::from_secs(5)).await;

    // Without a port the tool is not listed and cannot be called.
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "", None);
    let names = common::agent_tools(&run);
    assert!(!names.contains(&"ask_user".to_string()), "{names:?}");
    let absent = common::call_text(&run, "ask_user", json!({"question": "x?"})).await;
    assert!(absent.contains("unknown tool `ask_user`"), "{absent}");
    run.shutdown(Duration::from_secs(5)).await;
}

#[test]
fn a_write_from_an_eval_cell_meets_the_same_approval_card() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        // eval itself: allowed for the run; then the cell's write: denied, then allowed once.
        let port = Arc::new(ScriptedPort::new([
            answer(&[1], None),
            answer(&[2], None),
            answer(&[0], None),
        ]));
        let run = run_with(dir.path(), "approval = \"ask\"\n", Some(port.clone()));
        let cell = "try:\n    tool('write', {'path': 'out.txt', 'content': 'x\\n'})\n\
                    except ToolError as e:\n    print('refused:', e)";
        let eval = |code: &str| {
            common::call_text(
                &run,
                "eval",
                json!({"code": code, "description": "write a file from a cell"}),
            )
        };
        let first = eval(cell).await;
        assert!(
            first.contains("refused: the user denied `write`"),
            "{first}"
        );
        assert!(!dir.path().join("ws/out.txt").exists());
        let second = eval("tool('write', {'path': 'out.txt', 'content': 'x\\n'})").await;
        assert!(second.contains("out.txt"), "{second}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("ws/out.txt")).unwrap(),
            "x\n"
        );
        let shown: Vec<String> = port.shown().into_iter().map(|c| c.question).collect();
        assert_eq!(shown, ["Allow `eval`?", "Allow `write`?", "Allow `write`?"]);
        run.shutdown(Duration::from_secs(5)).await;
    });
}
