//! Structural search and the syntax check as one capability over the bundled grammars.

use std::sync::Arc;

use tether_tool::{BoxFuture, Capability, DoctorSection, Install};

use crate::{AstEditTool, AstGrepTool, Lang, StructuralConfig, SyntaxCheck, TreeCache};

/// `ast_grep`, `ast_edit` and the syntax-error write hook; configured by `[structural]`.
#[derive(Default)]
pub struct Structural {
    config: StructuralConfig,
}

impl Capability for Structural {
    fn settings(&self) -> &'static [tether_tool::Setting] {
        crate::SETTINGS
    }

    fn name(&self) -> &'static str {
        "structural"
    }

    fn section(&self) -> Option<&'static str> {
        Some("structural")
    }

    fn configure(
        &mut self,
        section: Option<&toml::Value>,
    ) -> Result<bool, tether_tool::SettingError> {
        self.config = StructuralConfig::from_section(section)?;
        Ok(true)
    }

    fn install(&mut self, run: &mut Install) {
        if self.config.syntax_check {
            run.hook(Arc::new(SyntaxCheck::new(run.workspace.clone())));
        }
        // A warm host's runs share one cache (trees are checked against the file's content
        // before reuse), so even its one-call runs start from the trees the others parsed. A
        // one-call run of its own keeps no trees: no later call would reuse them. The cache
        // holds nothing until the first search.
        let budget = self.config.cache_bytes();
        let cache = match (run.pool.outlives_runs(), run.single_call) {
            (true, _) => {
                let key = format!("trees|{}|{budget}", run.workspace.root().display());
                run.pool.get_or_insert(&key, || TreeCache::new(budget))
            }
            (false, true) => Arc::new(TreeCache::new(0)),
            (false, false) => Arc::new(TreeCache::new(budget)),
        };
        let limits = self.config.limits();
        run.tool(AstGrepTool::new(cache.clone()).with_limits(limits))
            .tool(AstEditTool::new(cache).with_limits(limits));
    }

    fn doctor<'a>(
        &'a self,
        _root: &'a std::path::Path,
        _trusted: bool,
    ) -> BoxFuture<'a, Vec<DoctorSection>> {
        Box::pin(async {
            vec![DoctorSection::new(
                "grammars (bundled, for ast_grep, ast_edit and the syntax check)",
                vec![Lang::ids().join(", ")],
            )]
        })
    }
}
