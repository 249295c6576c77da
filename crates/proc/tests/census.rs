//! The census of child processes walks every thread of every descendant: once the tree stays
//! the same it walks less often (a test binary of its own, so no other test's children change
//! the tree meanwhile).

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use tether_proc::{ChildSpec, LongChild, census_passes};

#[tokio::test]
async fn a_tree_that_stays_the_same_is_walked_less_often() {
    let spec = ChildSpec {
        argv: vec!["sleep".into(), "60".into()],
        cwd: None,
        env: Vec::new(),
    };
    let mut child = LongChild::spawn(&spec).unwrap();
    let began = census_passes();
    tokio::time::sleep(Duration::from_secs(8)).await;
    // Every 0.5 s that would be 16 walks; waits of 0.5, 1, 2 and 4 s make at most 5.
    let walks = census_passes() - began;
    assert!(walks <= 5, "{walks} walks of an unchanged tree in 8 s");
    assert!(walks >= 1, "the census never walked");
    child.shutdown(Duration::from_secs(2)).await;
}
