//! `[eval.sandbox]`: a kernel starts under the prefix when its probe succeeds, on the host (and
//! says why) when it fails or the workspace that set it is not trusted, and a prefix that
//! closes the kernel's channel is named as the reason it could not start.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use serde_json::json;
use tether::RunBuilder;

const WHERE: &str = "import os\nos.environ.get('SANDBOXED', 'host')";

async fn eval(run: &tether::Run) -> String {
    common::call_text(
        run,
        "eval",
        json!({"code": WHERE, "description": "say where this kernel runs and how"}),
    )
    .await
}

#[test]
fn kernels_start_inside_the_sandbox_only_when_its_probe_succeeds() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        let run = common::run_with_config(
            dir.path(),
            "[eval.sandbox]\nprefix = [\"env\", \"SANDBOXED=yes\"]\n",
        );
        let inside = eval(&run).await;
        assert!(
            inside.contains("inside the sandbox (`env SANDBOXED=yes`)")
                && inside.ends_with("Out: 'yes'"),
            "{inside}"
        );
        run.shutdown(Duration::from_secs(5)).await;

        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        let run = common::run_with_config(
            dir.path(),
            "[eval.sandbox]\nprefix = [\"env\", \"SANDBOXED=yes\"]\nprobe = [\"false\"]\n",
        );
        let host = eval(&run).await;
        assert!(
            host.contains("on the host: the sandbox probe `false` failed")
                && host.ends_with("Out: 'host'"),
            "{host}"
        );
        run.shutdown(Duration::from_secs(5)).await;

        // A prefix that does not pass descriptors 3 and 4 on (as `docker exec` cannot).
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        let run = common::run_with_config(
            dir.path(),
            "[eval.sandbox]\nprefix = [\"bash\", \"-c\", \"exec 3<&- 4>&-; exec \\\"$@\\\"\", \"closer\"]\n",
        );
        let closed = eval(&run).await;
        assert!(
            closed.starts_with("ERROR")
                && closed.contains("could not start")
                && closed.contains("needs descriptors 3 and 4"),
            "{closed}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn an_untrusted_workspace_sandbox_is_held_back_and_said() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        common::write(
            &dir.path().join("ws"),
            "tether.toml",
            "[eval.sandbox]\nprefix = [\"env\", \"SANDBOXED=yes\"]\n",
        );
        std::fs::create_dir_all(dir.path().join("cfg")).unwrap();
        let run = RunBuilder::new(dir.path().join("ws"))
            .user_config_dir(dir.path().join("cfg"))
            .state_dir(dir.path().join("state"))
            .build()
            .unwrap();
        let held = eval(&run).await;
        assert!(
            held.contains("on the host: the workspace's [eval.sandbox] runs a command")
                && held.contains("`tether trust`")
                && held.ends_with("Out: 'host'"),
            "{held}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}
