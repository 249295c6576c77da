//! The one way tether cuts text it shows: a cut always says how much it dropped, with one
//! mark, so a reader never takes a cut text for the whole.

/// The mark left where `rest` characters were cut off.
pub fn cut_mark(rest: usize) -> String {
    format!("… [+{rest} chars]")
}

/// Cuts one line to about `max` characters with a visible mark, on a char boundary.
pub fn cut_line(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        None => line.to_string(),
        Some((idx, _)) => {
            let rest = line[idx..].chars().count();
            format!("{}{}", &line[..idx], cut_mark(rest))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_line_marks_the_cut_on_char_boundaries() {
        assert_eq!(cut_line("héllo", 10), "héllo");
        assert_eq!(cut_line("héllo", 5), "héllo");
        assert_eq!(cut_line("héllo", 2), "hé… [+3 chars]");
    }
}
