//! Tables in the docs that code generates (the languages page, the README's settings): a test
//! compares the part between two marks with what the code says now.

use std::path::Path;

/// Whether the part of `page` between `begin` and `end` is `expected`; with `TETHER_BLESS=1`
/// in the environment it is written in instead. The error says what to paste, and where.
pub fn generated_part(page: &Path, begin: &str, end: &str, expected: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(page).unwrap_or_default();
    let Some((head, rest)) = text.split_once(begin) else {
        return Err(format!("{} has no `{begin}` mark", page.display()));
    };
    let Some((shown, tail)) = rest.split_once(end) else {
        return Err(format!("{} has no `{end}` mark", page.display()));
    };
    if shown == expected {
        return Ok(());
    }
    if std::env::var_os("TETHER_BLESS").is_some() {
        let blessed = format!("{head}{begin}{expected}{end}{tail}");
        return std::fs::write(page, blessed).map_err(|e| e.to_string());
    }
    Err(format!(
        "{}'s part between `{}` and `{end}` is out of date; run the test with TETHER_BLESS=1, \
         or paste this in its place:\n\n{expected}",
        page.display(),
        begin.trim_end()
    ))
}
