//! The frozen table of a run's tools: specs computed once at registration, and which tools
//! this client is offered. It knows nothing of calls; the runtime reads it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};

use tether_tool::{ClientFeature, DynTool, Surface, Tool, ToolError, ToolSpec};

use crate::wrap::WrappedWrite;

/// A tool with the spec computed once, when it was registered.
#[derive(Clone)]
pub(crate) struct Registered {
    pub(crate) spec: ToolSpec,
    pub(crate) tool: Arc<dyn DynTool>,
    /// Hidden until the front end says the client has this.
    pub(crate) needs: Option<ClientFeature>,
}

/// Collects the tools of one run; tools whose resource is absent are simply never added.
#[derive(Default)]
pub struct ToolTableBuilder {
    tools: BTreeMap<String, Registered>,
}

impl ToolTableBuilder {
    /// Adds a tool; a later tool with the same name replaces the earlier one.
    pub fn register<T: Tool>(&mut self, tool: T) -> &mut Self {
        self.register_dyn(Arc::new(tool))
    }

    /// Adds an already type-erased tool.
    pub fn register_dyn(&mut self, tool: Arc<dyn DynTool>) -> &mut Self {
        self.register_needing(tool, None)
    }

    /// Adds a tool that is hidden (not listed, not callable) until the front end says the
    /// client has `needs` (see [`ToolTable::client_has`]).
    pub fn register_needing(
        &mut self,
        tool: Arc<dyn DynTool>,
        needs: Option<ClientFeature>,
    ) -> &mut Self {
        let spec = tool.spec();
        let entry = Registered { spec, tool, needs };
        self.tools.insert(entry.spec.name.clone(), entry);
        self
    }

    /// Registers a host's own write tool so its writes get the same before/after hooks; the
    /// files a call writes are the ones its `preview` names.
    pub fn wrap_write<T: Tool>(&mut self, tool: T) -> &mut Self {
        self.register_dyn(Arc::new(WrappedWrite::new(Arc::new(tool))))
    }

    /// Freezes the table: no tool is added or removed after this.
    pub fn build(self) -> ToolTable {
        ToolTable {
            tools: self.tools,
            client: RwLock::default(),
        }
    }
}

/// The run's tools, frozen; only what the client is known to support can still change.
pub struct ToolTable {
    tools: BTreeMap<String, Registered>,
    /// What the front end learned the client can do, at its handshake.
    client: RwLock<BTreeSet<ClientFeature>>,
}

impl ToolTable {
    /// Starts an empty table.
    pub fn builder() -> ToolTableBuilder {
        ToolTableBuilder::default()
    }

    /// Tells the table the client has `feature`, which shows the tools that need it.
    pub fn client_has(&self, feature: ClientFeature) {
        let mut set = self.client.write().unwrap_or_else(|p| p.into_inner());
        set.insert(feature);
    }

    /// The specs of the tools `surface` may see, sorted by name.
    pub fn specs(&self, surface: Surface) -> Vec<ToolSpec> {
        self.offered()
            .filter(|t| surface.admits(t.spec.tier))
            .map(|t| t.spec.clone())
            .collect()
    }

    /// Finds `name` for a call on `surface`: an unknown or hidden tool lists what there is,
    /// and a tool above the surface's tier is refused.
    pub(crate) fn admit(&self, name: &str, surface: Surface) -> Result<&Registered, ToolError> {
        let Some(registered) = self.tools.get(name).filter(|t| self.is_offered(t)) else {
            return Err(ToolError::UnknownTool {
                name: name.to_string(),
                available: self.specs(surface).into_iter().map(|s| s.name).collect(),
            });
        };
        if !surface.admits(registered.spec.tier) {
            return Err(ToolError::Refused {
                tool: registered.spec.name.clone(),
                tier: registered.spec.tier,
                surface,
            });
        }
        Ok(registered)
    }

    /// The tools offered to this client.
    fn offered(&self) -> impl Iterator<Item = &Registered> {
        self.tools.values().filter(|t| self.is_offered(t))
    }

    /// Whether the client has what `t` needs (most tools need nothing).
    fn is_offered(&self, t: &Registered) -> bool {
        t.needs.is_none_or(|f| {
            let client = self.client.read().unwrap_or_else(|p| p.into_inner());
            client.contains(&f)
        })
    }
}
