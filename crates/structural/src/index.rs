//! A per-tree index of named nodes by kind, built when a tree enters the cache, so a warm
//! search visits only nodes of the pattern's root kind instead of walking every node. The
//! same walk measures the tree's depth, which decides whether a file is searched at all.

use std::collections::HashMap;

use ast_grep_core::Node;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_language::SupportLang;

use crate::lang::Tree;

/// Byte ranges of every named node, grouped by kind, in pre-order.
pub(crate) struct KindIndex {
    by_kind: HashMap<u16, Kind>,
    /// Every node of the tree, named or not: what a full walk visits.
    nodes: usize,
    /// The deepest level of the tree (the root is level 0).
    depth: usize,
}

/// The nodes of one kind, and the sum of their depths: finding a node again from its range
/// descends from the root, so that sum is what serving the kind from the index costs.
#[derive(Default)]
struct Kind {
    ranges: Vec<(u32, u32)>,
    depths: u64,
}

/// How many times the cost of a full walk the index may spend before the walk is used
/// instead; only trees nested far deeper than real code come near it.
const INDEX_COST_FACTOR: u64 = 4;

impl KindIndex {
    /// Walks the tree once with a cursor.
    pub(crate) fn build(tree: &Tree) -> Self {
        let mut by_kind: HashMap<u16, Kind> = HashMap::new();
        let mut nodes = 0usize;
        let depth = walk(&tree.root(), |node, level| {
            nodes += 1;
            if node.named {
                let range = node.range;
                let kind = by_kind.entry(node.kind).or_default();
                kind.depths += level as u64;
                if kind.ranges.last() != Some(&range) {
                    kind.ranges.push(range);
                }
            }
        });
        KindIndex {
            by_kind,
            nodes,
            depth,
        }
    }

    /// The deepest level of the tree.
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// Estimated heap bytes, for the cache budget.
    pub(crate) fn bytes(&self) -> usize {
        self.by_kind.values().map(|v| v.ranges.len() * 8 + 48).sum()
    }

    /// Every node of `kind` in pre-order, or None when the caller must walk the tree instead:
    /// `kind` is not a named kind (the index holds only named nodes), or its nodes lie so deep
    /// that finding each again from the root would cost more than the walk.
    pub(crate) fn nodes<'t>(
        &self,
        tree: &'t Tree,
        kind: u16,
    ) -> Option<Vec<Node<'t, StrDoc<SupportLang>>>> {
        let ts_root = tree.root().get_inner_node();
        if !ts_root.language().node_kind_is_named(kind) {
            return None;
        }
        let entry = self.by_kind.get(&kind);
        if entry.is_some_and(|k| k.depths > INDEX_COST_FACTOR * self.nodes as u64) {
            return None;
        }
        let mut out = Vec::new();
        for &(start, end) in entry.map(|k| k.ranges.as_slice()).unwrap_or(&[]) {
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

/// The deepest level of a tree that has no index (it was not cached).
pub(crate) fn depth_of(tree: &Tree) -> usize {
    walk(&tree.root(), |_, _| {})
}

/// How many levels `node`'s subtree has below `node` itself.
pub(crate) fn subtree_depth(node: &Node<'_, StrDoc<SupportLang>>) -> usize {
    walk(node, |_, _| {})
}

/// What the index keeps of one node.
struct Seen {
    named: bool,
    kind: u16,
    range: (u32, u32),
}

/// Visits every node in pre-order with its level (the root is 0) and returns the deepest
/// level; a cursor walk, so it needs no stack however deep the tree is.
fn walk(root: &Node<'_, StrDoc<SupportLang>>, mut visit: impl FnMut(Seen, usize)) -> usize {
    let mut cursor = root.get_inner_node().walk();
    let (mut level, mut depth) = (0usize, 0usize);
    'walk: loop {
        let node = cursor.node();
        let seen = Seen {
            named: node.is_named(),
            kind: node.kind_id(),
            range: (node.start_byte() as u32, node.end_byte() as u32),
        };
        visit(seen, level);
        depth = depth.max(level);
        if cursor.goto_first_child() {
            level += 1;
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
            level -= 1;
        }
    }
    depth
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;

    fn parens(tree: &Tree) -> u16 {
        let root = tree.root();
        let found = root.dfs().find(|n| n.kind() == "parenthesized_expression");
        found.unwrap().kind_id()
    }

    #[test]
    fn the_index_steps_aside_where_finding_nodes_again_costs_more_than_a_walk() {
        let js = Lang::by_id("javascript").unwrap();
        // Finding each node from its range descends from the root: on this tree that is
        // quadratic, as the walk is not.
        let n = 3_000;
        let deep = js.parse(&format!("x = {}a{};", "(".repeat(n), ")".repeat(n)));
        let index = KindIndex::build(&deep);
        assert_eq!(index.depth(), depth_of(&deep));
        assert!(index.depth() > n);
        assert!(index.nodes(&deep, parens(&deep)).is_none());
        let flat = js.parse(&"f((a), (b));\n".repeat(100));
        let index = KindIndex::build(&flat);
        assert_eq!(
            index.nodes(&flat, parens(&flat)).map(|v| v.len()),
            Some(200)
        );
        assert_eq!(index.depth(), depth_of(&flat));
    }
}
