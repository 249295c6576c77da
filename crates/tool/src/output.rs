/// One piece of a tool result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Block {
    /// Text for the model.
    Text(String),
    /// A PNG image, for figures and screenshots.
    Png(Vec<u8>),
}

/// What a tool returns: text blocks and images, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolOutput {
    blocks: Vec<Block>,
}

impl ToolOutput {
    /// A result made of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            blocks: vec![Block::Text(text.into())],
        }
    }

    /// Appends a text block.
    pub fn push_text(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Text(text.into()));
    }

    /// Appends a PNG image.
    pub fn push_png(&mut self, png: Vec<u8>) {
        self.blocks.push(Block::Png(png));
    }

    /// The blocks in order.
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// All text blocks joined by blank lines, images shown as a placeholder.
    pub fn to_text(&self) -> String {
        let parts: Vec<String> = self
            .blocks
            .iter()
            .map(|b| match b {
                Block::Text(t) => t.clone(),
                Block::Png(bytes) => format!("[image: PNG, {} bytes]", bytes.len()),
            })
            .collect();
        parts.join("\n\n")
    }
}

/// `n` and a noun, in the plural unless `n` is 1 ("1 file", "3 files"), for counts in results.
pub fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Renders at most `cap` items, one a line, and always says how many were left out.
pub fn capped_list<I, S>(items: I, cap: usize, noun: &str) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = String::new();
    let mut total = 0usize;
    for item in items {
        if total < cap {
            out.push_str(item.as_ref());
            out.push('\n');
        }
        total += 1;
    }
    if total > cap {
        out.push_str(&format!(
            "… {} more {noun} not shown ({total} in all, cap {cap})\n",
            total - cap
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_list_says_what_it_left_out() {
        let s = capped_list((1..=5).map(|i| i.to_string()), 3, "items");
        assert_eq!(s, "1\n2\n3\n… 2 more items not shown (5 in all, cap 3)\n");
        assert_eq!(capped_list(["a"], 3, "items"), "a\n");
    }

    #[test]
    fn counts_are_singular_only_for_one() {
        assert_eq!(counted(0, "file"), "0 files");
        assert_eq!(counted(1, "file"), "1 file");
        assert_eq!(counted(2, "line"), "2 lines");
    }
}
