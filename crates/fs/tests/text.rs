//! Text shape round-trip tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tether_fs::{FsError, TextShape, decode_text, encode_text};

fn round_trip(bytes: &[u8]) -> (String, TextShape) {
    let (text, shape) = decode_text("f", bytes).unwrap();
    assert_eq!(encode_text(&text, shape), bytes, "round trip of {bytes:?}");
    (text, shape)
}

#[test]
fn lf_and_crlf() {
    let (t, s) = round_trip(b"a\nb\n");
    assert_eq!(t, "a\nb\n");
    assert_eq!(
        s,
        TextShape {
            bom: false,
            crlf: false,
            final_newline: true
        }
    );
    let (t, s) = round_trip(b"a\r\nb\r\n");
    assert_eq!(t, "a\nb\n");
    assert!(s.crlf && s.final_newline && !s.bom);
}

#[test]
fn bom_and_no_final_newline() {
    let (t, s) = round_trip(b"\xEF\xBB\xBFa\r\nb");
    assert_eq!(t, "a\nb");
    assert_eq!(
        s,
        TextShape {
            bom: true,
            crlf: true,
            final_newline: false
        }
    );
    let (t, s) = round_trip(b"single line");
    assert_eq!(t, "single line");
    assert_eq!(s, TextShape::default());
    round_trip(b"");
    round_trip(b"\xEF\xBB\xBF");
    round_trip(b"\n");
}

#[test]
fn mixed_line_endings_round_trip_byte_for_byte() {
    for bytes in [
        &b"a\r\nb\r\nc\nd"[..],
        b"a\r\nb\nc\n",
        b"a\nb\nc\r\n",
        b"x\r\r\ny\r\n",
        b"a\r",
        b"a\r\n\r",
    ] {
        let (t, s) = decode_text("f", bytes).unwrap();
        assert_eq!(
            encode_text(&t, s),
            bytes,
            "{:?}",
            String::from_utf8_lossy(bytes)
        );
    }
    // Only a file whose every break is CRLF counts as CRLF.
    assert!(!decode_text("f", b"a\r\nb\r\nc\n").unwrap().1.crlf);
    assert!(decode_text("f", b"a\r\nb\r\n").unwrap().1.crlf);
}

#[test]
fn shape_applies_to_new_text() {
    let crlf = TextShape {
        bom: false,
        crlf: true,
        final_newline: true,
    };
    assert_eq!(encode_text("x\ny", crlf), b"x\r\ny\r\n");
    assert_eq!(encode_text("", crlf), b"");
    let none = TextShape {
        final_newline: false,
        ..crlf
    };
    assert_eq!(encode_text("x\ny\n", none), b"x\r\ny");
    let lf = TextShape::default();
    assert_eq!(encode_text("x\n", lf), b"x");
}

#[test]
fn invalid_utf8_reports_offset() {
    match decode_text("bad.bin", b"abc\xFFdef") {
        Err(FsError::NotUtf8 { path, offset }) => {
            assert_eq!(path, "bad.bin");
            assert_eq!(offset, 3);
        }
        r => panic!("expected NotUtf8, got {r:?}"),
    }
    match decode_text("bad.bin", b"\xEF\xBB\xBFab\xC3") {
        Err(FsError::NotUtf8 { offset, .. }) => assert_eq!(offset, 5),
        r => panic!("expected NotUtf8, got {r:?}"),
    }
}
