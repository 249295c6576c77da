//! A per-tree index of named nodes by kind, built when a tree enters the cache, so a warm
//! search visits only nodes of the pattern's root kind instead of walking every node.

use std::collections::HashMap;

use ast_grep_core::Node;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_language::SupportLang;

use crate::lang::Tree;

/// Byte ranges of every named node, grouped by kind, in pre-order.
pub(crate) struct KindIndex {
    by_kind: HashMap<u16, Vec<(u32, u32)>>,
}

impl KindIndex {
    /// Walks the tree once with a cursor.
    pub(crate) fn build(tree: &Tree) -> Self {
        let mut by_kind: HashMap<u16, Vec<(u32, u32)>> = HashMap::new();
        let root = tree.root();
        let mut cursor = root.get_inner_node().walk();
        'walk: loop {
            let node = cursor.node();
            if node.is_named() {
                let range = (node.start_byte() as u32, node.end_byte() as u32);
                let list = by_kind.entry(node.kind_id()).or_default();
                if list.last() != Some(&range) {
                    list.push(range);
                }
            }
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        KindIndex { by_kind }
    }

    /// Estimated heap bytes, for the cache budget.
    pub(crate) fn bytes(&self) -> usize {
        self.by_kind.values().map(|v| v.len() * 8 + 32).sum()
    }

    /// Every node of `kind` in pre-order, or None when `kind` is not a named kind (the index
    /// holds only named nodes, so the caller must walk the tree instead).
    pub(crate) fn nodes<'t>(
        &self,
        tree: &'t Tree,
        kind: u16,
    ) -> Option<Vec<Node<'t, StrDoc<SupportLang>>>> {
        let ts_root = tree.root().get_inner_node();
        if !ts_root.language().node_kind_is_named(kind) {
            return None;
        }
        let mut out = Vec::new();
        for &(start, end) in self.by_kind.get(&kind).map(Vec::as_slice).unwrap_or(&[]) {
            let (start, end) = (start as usize, end as usize);
            let Some(mut n) = ts_root.named_descendant_for_byte_range(start, end) else {
                continue;
            };
            // Climb through every ancestor with the same bytes: nested nodes of one kind and
            // one range are all candidates, outermost first, as a pre-order walk sees them.
            let mut chain = Vec::new();
            loop {
                if n.start_byte() == start && n.end_byte() == end && n.kind_id() == kind {
                    chain.push(n);
                }
                match n.parent() {
                    Some(p) if (p.start_byte(), p.end_byte()) == (start, end) => n = p,
                    _ => break,
                }
            }
            out.extend(chain.into_iter().rev().map(|inner| tree.adopt(inner)));
        }
        Some(out)
    }
}
