//! Staged store tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tether_fs::{Resolution, StagedError, StagedStore};

#[test]
fn stage_take_and_messages() {
    let store = StagedStore::new();
    assert_eq!(
        store.stage("rewrite", "s1".into(), "p1".into(), vec![]),
        "edit_1"
    );
    assert_eq!(
        store.stage("rename", "s2".into(), "p2".into(), vec![]),
        "edit_2"
    );
    assert_eq!(
        store.stage("rename", "s3".into(), "p3".into(), vec![]),
        "edit_3"
    );
    assert_eq!(store.pending(), ["edit_1", "edit_2", "edit_3"]);

    let c = store.take("edit_1", Resolution::Accepted).unwrap();
    assert_eq!(
        (c.id.as_str(), c.origin.as_str(), c.summary.as_str()),
        ("edit_1", "rewrite", "s1")
    );
    assert_eq!(store.pending(), ["edit_2", "edit_3"]);

    let e = store.take("edit_1", Resolution::Discarded).unwrap_err();
    assert!(matches!(
        e,
        StagedError::AlreadyResolved {
            how: Resolution::Accepted,
            ..
        }
    ));
    assert_eq!(
        e.to_string(),
        "edit_id \"edit_1\" was already accepted; pending: edit_2, edit_3"
    );

    let e = store.take("x", Resolution::Accepted).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown edit_id \"x\"; pending: edit_2, edit_3"
    );
    let e = store.take("edit_9", Resolution::Accepted).unwrap_err();
    assert!(matches!(e, StagedError::Unknown { .. }));

    store.take("edit_3", Resolution::Discarded).unwrap();
    let c = store.take("edit_2", Resolution::Accepted).unwrap();
    let e = store.take("edit_3", Resolution::Accepted).unwrap_err();
    assert_eq!(
        e.to_string(),
        "edit_id \"edit_3\" was already discarded; no staged edits are pending"
    );
    let e = store.take("nope", Resolution::Accepted).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown edit_id \"nope\"; no staged edits are pending"
    );

    // An accept that failed puts the change back; it can then be discarded.
    store.restore(c);
    assert_eq!(store.pending(), ["edit_2"]);
    store.take("edit_2", Resolution::Discarded).unwrap();
    assert_eq!(store.stage("x", "s".into(), "p".into(), vec![]), "edit_4");
}

#[test]
fn pending_sorts_numerically() {
    let store = StagedStore::new();
    for _ in 0..11 {
        store.stage("o", String::new(), String::new(), vec![]);
    }
    let p = store.pending();
    assert_eq!(p[1], "edit_2");
    assert_eq!(p[10], "edit_11");
}
