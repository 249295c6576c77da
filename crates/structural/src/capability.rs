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
    fn name(&self) -> &'static str {
        "structural"
    }

    fn section(&self) -> Option<&'static str> {
        Some("structural")
    }

    fn configure(&mut self, section: Option<&toml::Value>) -> Result<bool, String> {
        self.config = StructuralConfig::from_section(section)?;
        Ok(true)
    }

    fn install(&mut self, run: &mut Install) {
        if self.config.syntax_check {
            run.hook(Arc::new(SyntaxCheck::new(run.workspace.clone())));
        }
        // A one-call run keeps no trees: there is no later call to reuse them. The cache
        // itself holds nothing until the first search.
        let budget = match run.single_call {
            true => 0,
            false => self.config.cache_bytes(),
        };
        // A warm host's runs share one cache (trees are checked against the file's content
        // before reuse), so even its one-call runs start from the trees the others parsed.
        let cache = match run.pool.outlives_runs() {
            true => {
                let budget = self.config.cache_bytes();
                let key = format!("trees|{}|{budget}", run.workspace.root().display());
                run.pool.get_or_insert(&key, || TreeCache::new(budget))
            }
            false => Arc::new(TreeCache::new(budget)),
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
