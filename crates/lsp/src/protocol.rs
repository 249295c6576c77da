//! The Language Server Protocol as tether speaks it. What we send is built from `lsp-types`
//! (LSP 3.17); what we read goes through our own small structs, lenient as servers are: a field
//! that is missing, `null` or of another type takes its default, and a list keeps what fits.

use std::collections::BTreeMap;
use std::path::Path;

use lsp_types as lsp;
use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::LspError;
use crate::lax::{lax, lax_list, lax_list_or_none};

/// Reads an answer or a notification's params; one that does not fit at all reads as the
/// default (with every field lenient, only a value of the wrong shape altogether does not fit).
pub fn read<T: DeserializeOwned + Default>(value: impl Into<tether_rpc::Payload>) -> T {
    value.into().read().unwrap_or_else(|e| {
        tracing::debug!("an LSP message that does not fit: {e}");
        T::default()
    })
}

/// A list as servers send it: `null` is empty, one item stands for a list of one (a
/// `Location` where `Location[]` may come), and items that do not fit are skipped.
pub fn many<T: DeserializeOwned>(value: Value) -> Vec<T> {
    let fits = |v| serde_json::from_value(v).ok();
    match value {
        Value::Array(items) => items.into_iter().filter_map(fits).collect(),
        Value::Null => Vec::new(),
        one => fits(one).into_iter().collect(),
    }
}

/// A field read leniently: `null` or a value of another type takes the default, as a
/// missing one does (with the container's `#[serde(default)]`).
pub(crate) fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(
    d: D,
) -> Result<T, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(d)?).unwrap_or_default())
}

/// A list field read as [`many`] reads one.
pub(crate) fn list<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    Ok(many(Value::deserialize(d)?))
}

/// Params serialized for the wire; a message that cannot be written is an error, not a panic.
pub fn to_params(method: &str, params: impl Serialize) -> Result<Value, LspError> {
    serde_json::to_value(params).map_err(|e| LspError::Params {
        method: method.to_string(),
        cause: std::sync::Arc::new(e),
    })
}

/// The `Uri` of a file: our own encoder's text ([`crate::server::file_uri`], which keeps the
/// bytes of a name that is not UTF-8), parsed.
pub fn uri(path: &Path) -> Result<lsp::Uri, LspError> {
    let text = crate::server::file_uri(path);
    text.parse().map_err(|e| LspError::Uri {
        path: path.to_path_buf(),
        reason: format!("{e}"),
        text,
    })
}

/// The document a request is about.
pub fn document(path: &Path) -> Result<lsp::TextDocumentIdentifier, LspError> {
    Ok(lsp::TextDocumentIdentifier { uri: uri(path)? })
}

/// A place in a document, for the requests that take one.
pub fn at(
    path: &Path,
    line: usize,
    character: u32,
) -> Result<lsp::TextDocumentPositionParams, LspError> {
    Ok(lsp::TextDocumentPositionParams {
        text_document: document(path)?,
        position: lsp::Position {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            character,
        },
    })
}

/// The client capabilities every server is offered.
pub fn client_capabilities() -> lsp::ClientCapabilities {
    use lsp::{CodeActionKind as Kind, MarkupKind, PositionEncodingKind, ResourceOperationKind};
    let goto = Some(lsp::GotoCapability {
        dynamic_registration: None,
        link_support: Some(true),
    });
    let kinds = [
        Kind::EMPTY,
        Kind::QUICKFIX,
        Kind::REFACTOR,
        Kind::REFACTOR_EXTRACT,
        Kind::REFACTOR_INLINE,
        Kind::REFACTOR_REWRITE,
        Kind::SOURCE,
        Kind::SOURCE_ORGANIZE_IMPORTS,
    ];
    lsp::ClientCapabilities {
        general: Some(lsp::GeneralClientCapabilities {
            position_encodings: Some(vec![
                PositionEncodingKind::UTF8,
                PositionEncodingKind::UTF16,
            ]),
            ..Default::default()
        }),
        workspace: Some(lsp::WorkspaceClientCapabilities {
            configuration: Some(true),
            workspace_folders: Some(true),
            apply_edit: Some(true),
            workspace_edit: Some(lsp::WorkspaceEditClientCapabilities {
                document_changes: Some(true),
                resource_operations: Some(vec![
                    ResourceOperationKind::Create,
                    ResourceOperationKind::Rename,
                    ResourceOperationKind::Delete,
                ]),
                ..Default::default()
            }),
            symbol: Some(lsp::WorkspaceSymbolClientCapabilities {
                dynamic_registration: Some(false),
                ..Default::default()
            }),
            // `lsp_rename` with `to_path` asks for the edits a moved file needs.
            file_operations: Some(lsp::WorkspaceFileOperationsClientCapabilities {
                will_rename: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        }),
        window: Some(lsp::WindowClientCapabilities {
            work_done_progress: Some(true),
            ..Default::default()
        }),
        text_document: Some(lsp::TextDocumentClientCapabilities {
            synchronization: Some(lsp::TextDocumentSyncClientCapabilities {
                did_save: Some(true),
                dynamic_registration: Some(false),
                ..Default::default()
            }),
            hover: Some(lsp::HoverClientCapabilities {
                content_format: Some(vec![MarkupKind::Markdown, MarkupKind::PlainText]),
                ..Default::default()
            }),
            definition: goto,
            type_definition: goto,
            implementation: goto,
            references: Some(lsp::ReferenceClientCapabilities::default()),
            document_symbol: Some(lsp::DocumentSymbolClientCapabilities {
                hierarchical_document_symbol_support: Some(true),
                ..Default::default()
            }),
            publish_diagnostics: Some(lsp::PublishDiagnosticsClientCapabilities {
                version_support: Some(true),
                related_information: Some(false),
                ..Default::default()
            }),
            diagnostic: Some(lsp::DiagnosticClientCapabilities {
                dynamic_registration: Some(false),
                ..Default::default()
            }),
            rename: Some(lsp::RenameClientCapabilities {
                prepare_support: Some(true),
                ..Default::default()
            }),
            code_action: Some(lsp::CodeActionClientCapabilities {
                code_action_literal_support: Some(lsp::CodeActionLiteralSupport {
                    code_action_kind: lsp::CodeActionKindLiteralSupport {
                        value_set: kinds.iter().map(|k| k.as_str().to_string()).collect(),
                    },
                }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        // clangd's own way to agree on UTF-8.
        offset_encoding: Some(vec!["utf-8".into(), "utf-16".into()]),
        // rust-analyzer's way to say when it has finished loading the project.
        experimental: Some(serde_json::json!({"serverStatusNotification": true})),
        ..Default::default()
    }
}

/// `initialize`'s params for a server of the project at `root`, with the configured
/// `initializationOptions` (catalog and user data, so a `Value`).
pub fn initialize_params(root: &Path, init: Value) -> Result<lsp::InitializeParams, LspError> {
    let uri = uri(root)?;
    let name = root
        .file_name()
        .map_or("root".into(), |n| n.to_string_lossy().into_owned());
    // Older servers read only `rootUri` or `rootPath`, so both are still sent.
    #[allow(deprecated)]
    Ok(lsp::InitializeParams {
        process_id: Some(std::process::id()),
        client_info: Some(lsp::ClientInfo {
            name: "tether".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        root_uri: Some(uri.clone()),
        root_path: Some(root.display().to_string()),
        workspace_folders: Some(vec![lsp::WorkspaceFolder { uri, name }]),
        capabilities: client_capabilities(),
        initialization_options: Some(init),
        ..Default::default()
    })
}

/// A 0-based place in a document, in the server's column unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(default)]
pub struct Position {
    #[serde(deserialize_with = "lax")]
    pub line: u32,
    #[serde(deserialize_with = "lax")]
    pub character: u32,
}

/// A span of a document.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Range {
    #[serde(deserialize_with = "lax")]
    pub start: Position,
    #[serde(deserialize_with = "lax")]
    pub end: Position,
}

impl From<Range> for lsp::Range {
    fn from(r: Range) -> lsp::Range {
        let at = |p: Position| lsp::Position::new(p.line, p.character);
        lsp::Range::new(at(r.start), at(r.end))
    }
}

/// A number or a string, as a diagnostic's code or a progress token is.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum NumberOrString {
    Number(serde_json::Number),
    String(String),
}

impl std::fmt::Display for NumberOrString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NumberOrString::Number(n) => write!(f, "{n}"),
            NumberOrString::String(s) => f.write_str(s),
        }
    }
}

/// One diagnostic, with the fields tether reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Diagnostic {
    #[serde(deserialize_with = "lax")]
    pub range: Range,
    /// 1 error, 2 warning, 3 information, 4 hint; absent means error to tether.
    #[serde(deserialize_with = "lax")]
    pub severity: Option<u64>,
    #[serde(deserialize_with = "lax")]
    pub code: Option<NumberOrString>,
    #[serde(deserialize_with = "lax")]
    pub source: Option<String>,
    #[serde(deserialize_with = "lax")]
    pub message: String,
}

impl Diagnostic {
    /// Its severity from 1 (error) to 4 (hint), error when the server gave none.
    pub fn level(&self) -> u64 {
        self.severity.unwrap_or(1).clamp(1, 4)
    }

    /// The message on one line: its lines joined with "; ", a repeated line once, so a
    /// rustc message and its label ("mismatched types", "expected `u32`, found `&str`") read
    /// as two phrases, not one run together.
    pub fn one_line(&self) -> String {
        one_line(&self.message)
    }

    /// ` [code]`, or nothing without one.
    pub fn code_tag(&self) -> String {
        self.code
            .as_ref()
            .map(|c| format!(" [{c}]"))
            .unwrap_or_default()
    }
}

/// `text`'s non-empty lines, trimmed, joined with "; ", each once.
pub fn one_line(text: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines.join("; ")
}

impl From<&Diagnostic> for lsp::Diagnostic {
    fn from(d: &Diagnostic) -> lsp::Diagnostic {
        use lsp::DiagnosticSeverity as S;
        let severity = match d.severity {
            Some(1) => Some(S::ERROR),
            Some(2) => Some(S::WARNING),
            Some(3) => Some(S::INFORMATION),
            Some(4) => Some(S::HINT),
            _ => None,
        };
        let code = d.code.as_ref().map(|c| match c {
            NumberOrString::Number(n) => match n.as_i64().and_then(|n| i32::try_from(n).ok()) {
                Some(n) => lsp::NumberOrString::Number(n),
                None => lsp::NumberOrString::String(n.to_string()),
            },
            NumberOrString::String(s) => lsp::NumberOrString::String(s.clone()),
        });
        lsp::Diagnostic {
            range: d.range.into(),
            severity,
            code,
            source: d.source.clone(),
            message: d.message.clone(),
            ..Default::default()
        }
    }
}

/// `textDocument/publishDiagnostics`'s params with the diagnostics left as the server wrote
/// them: a file published again unchanged (pyright publishes every importer it checks again)
/// is known by their digest and not read a second time.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct PublishedText<'a> {
    #[serde(deserialize_with = "lax")]
    pub uri: Option<String>,
    #[serde(deserialize_with = "lax")]
    pub version: Option<i64>,
    #[serde(borrow)]
    pub diagnostics: Option<&'a serde_json::value::RawValue>,
}

impl PublishedText<'_> {
    /// A digest of the diagnostics' text, never 0 (which stands for none known).
    pub fn digest(&self) -> u64 {
        let text = self.diagnostics.map_or("", |d| d.get());
        xxhash_rust::xxh3::xxh3_64(text.as_bytes()).max(1)
    }

    /// The diagnostics, read as leniently as any list a server sends.
    pub fn items(&self) -> Vec<Diagnostic> {
        #[derive(Deserialize)]
        struct Items(#[serde(deserialize_with = "lax_list")] Vec<Diagnostic>);
        let text = self.diagnostics.map_or("null", |d| d.get());
        serde_json::from_str::<Items>(text).map_or_else(|_| Vec::new(), |items| items.0)
    }
}

/// A pull's answer (`textDocument/diagnostic`): a full report has `items`; an unchanged one,
/// or `null` from a server that does not know the request, has none.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct DiagnosticReport {
    #[serde(deserialize_with = "lax_list_or_none")]
    pub items: Option<Vec<Diagnostic>>,
    /// What names this report, so a later pull may be answered "unchanged".
    #[serde(rename = "resultId", deserialize_with = "lenient")]
    pub result_id: Option<String>,
    /// Whether it is an "unchanged" report, standing for the one `result_id` names.
    #[serde(rename = "kind", deserialize_with = "is_unchanged")]
    pub unchanged: bool,
}

/// Whether a report's `kind` is "unchanged"; any other value or shape is not.
fn is_unchanged<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    let kind: Option<String> = lenient(d)?;
    Ok(kind.as_deref() == Some("unchanged"))
}

/// rust-analyzer's `experimental/serverStatus`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ServerStatus {
    #[serde(deserialize_with = "lenient")]
    pub quiescent: Option<bool>,
    #[serde(deserialize_with = "lenient")]
    pub health: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub message: Option<String>,
}

/// `$/progress`' params, for work-done progress.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ProgressParams {
    #[serde(deserialize_with = "lenient")]
    pub token: Option<NumberOrString>,
    #[serde(deserialize_with = "lenient")]
    pub value: Progress,
}

/// One work-done progress report: `begin`, `report` or `end`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Progress {
    #[serde(deserialize_with = "lenient")]
    pub kind: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub title: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub percentage: Option<u64>,
}

/// `workspace/configuration`'s params: the sections asked for.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ConfigurationParams {
    #[serde(deserialize_with = "list")]
    pub items: Vec<ConfigurationItem>,
}

/// One section asked for; none means all the settings.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ConfigurationItem {
    #[serde(deserialize_with = "lenient")]
    pub section: Option<String>,
}

/// `workspace/applyEdit`'s params.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ApplyWorkspaceEditParams {
    #[serde(deserialize_with = "lenient")]
    pub edit: WorkspaceEdit,
}

/// A `WorkspaceEdit`: edits by URI (`changes`) or as a list of document changes, which may
/// also create, rename or delete files.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WorkspaceEdit {
    #[serde(deserialize_with = "lenient")]
    pub changes: BTreeMap<String, Edits>,
    #[serde(deserialize_with = "list")]
    pub document_changes: Vec<DocumentChange>,
}

/// One file's text edits, the ones that fit.
#[derive(Debug, Default)]
pub struct Edits(pub Vec<TextEdit>);

impl<'de> Deserialize<'de> for Edits {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        list(d).map(Edits)
    }
}

/// A text edit, or a file operation when `kind` is set (`create`, `rename`, `delete`).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DocumentChange {
    #[serde(deserialize_with = "lenient")]
    pub kind: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub text_document: DocumentId,
    #[serde(deserialize_with = "list")]
    pub edits: Vec<TextEdit>,
    #[serde(deserialize_with = "lenient")]
    pub old_uri: String,
    #[serde(deserialize_with = "lenient")]
    pub new_uri: String,
}

/// A document named by its URI.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct DocumentId {
    #[serde(deserialize_with = "lenient")]
    pub uri: String,
}

/// One replacement of a span's text.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TextEdit {
    #[serde(deserialize_with = "lenient")]
    pub range: Range,
    #[serde(deserialize_with = "lenient")]
    pub new_text: String,
}

/// `initialize`'s answer, of what tether uses.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct InitializeResult {
    #[serde(deserialize_with = "lenient")]
    pub capabilities: ServerCapabilities,
    /// clangd's answer to our `offsetEncoding`.
    #[serde(deserialize_with = "lenient")]
    pub offset_encoding: Option<String>,
}

/// What a server announced it can do, of what tether asks.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ServerCapabilities {
    #[serde(deserialize_with = "lenient")]
    pub position_encoding: Option<String>,
    pub hover_provider: Offered,
    pub definition_provider: Offered,
    pub type_definition_provider: Offered,
    pub implementation_provider: Offered,
    pub references_provider: Offered,
    pub document_symbol_provider: Offered,
    pub workspace_symbol_provider: Offered,
    pub code_action_provider: Offered<CodeActionOptions>,
    pub rename_provider: Offered<RenameOptions>,
    pub diagnostic_provider: Offered<DiagnosticOptions>,
    #[serde(deserialize_with = "lenient")]
    pub workspace: WorkspaceCapabilities,
}

/// `workspace` of the server's capabilities, what tether reads of it.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WorkspaceCapabilities {
    #[serde(deserialize_with = "lenient")]
    pub file_operations: FileOperations,
}

/// The file operations a server wants to hear of before they happen.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FileOperations {
    #[serde(deserialize_with = "lenient")]
    pub will_rename: Option<FileOperationFilters>,
}

/// Which files a file operation is asked about for.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct FileOperationFilters {
    #[serde(deserialize_with = "list")]
    pub filters: Vec<FileOperationFilter>,
}

/// One filter: a scheme (none: any) and a glob over the file's path.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct FileOperationFilter {
    #[serde(deserialize_with = "lenient")]
    pub scheme: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub pattern: FileOperationPattern,
}

/// The glob of a filter, what it matches (`file`, `folder`, or both) and whether case counts.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct FileOperationPattern {
    #[serde(deserialize_with = "lenient")]
    pub glob: String,
    #[serde(deserialize_with = "lenient")]
    pub matches: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub options: GlobOptions,
}

/// A filter's options.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct GlobOptions {
    #[serde(deserialize_with = "lenient")]
    pub ignore_case: bool,
}

impl FileOperationFilters {
    /// Whether the file at `path` (a folder when `folder`) fits one of the filters.
    pub fn cover(&self, path: &Path, folder: bool) -> bool {
        let wanted = if folder { "folder" } else { "file" };
        self.filters.iter().any(|f| {
            let scheme = f.scheme.as_deref().is_none_or(|s| s == "file");
            let kind = f.pattern.matches.as_deref().is_none_or(|m| m == wanted);
            let glob = globset::GlobBuilder::new(&f.pattern.glob)
                .literal_separator(true)
                .case_insensitive(f.pattern.options.ignore_case)
                .build();
            scheme && kind && glob.is_ok_and(|g| g.compile_matcher().is_match(path))
        })
    }
}

/// A capability as servers announce it: absent, `false` or `null` is not offered; `true` or
/// any options is, with the options read leniently.
#[derive(Debug, Default)]
pub struct Offered<T = NoOptions> {
    pub on: bool,
    pub options: T,
}

impl<'de, T: DeserializeOwned + Default> Deserialize<'de> for Offered<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Null | Value::Bool(false) => Offered::default(),
            options => Offered {
                on: true,
                options: read(options),
            },
        })
    }
}

/// The options of a capability whose options tether does not read.
#[derive(Debug, Default, Deserialize)]
pub struct NoOptions {}

/// `codeActionProvider`'s options.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CodeActionOptions {
    #[serde(deserialize_with = "lenient")]
    pub resolve_provider: bool,
}

/// `renameProvider`'s options.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RenameOptions {
    #[serde(deserialize_with = "lenient")]
    pub prepare_provider: bool,
}

/// `diagnosticProvider`'s options.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DiagnosticOptions {
    #[serde(deserialize_with = "lenient")]
    pub workspace_diagnostics: bool,
}

/// A `Location` or a `LocationLink`, as definition, references and symbols answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Location {
    #[serde(deserialize_with = "lenient")]
    pub uri: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub range: Option<Range>,
    #[serde(deserialize_with = "lenient")]
    pub target_uri: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub target_selection_range: Option<Range>,
}

impl Location {
    /// The file and the start of the span it points at (a link's target, else its own).
    pub fn target(&self) -> Option<(&str, Position)> {
        let uri = self.target_uri.as_deref().or(self.uri.as_deref())?;
        let range = self.target_selection_range.or(self.range)?;
        Some((uri, range.start))
    }
}

/// `textDocument/hover`'s answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Hover {
    pub contents: Option<HoverContents>,
}

/// A hover's contents: markup, a marked string, or a list of them.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum HoverContents {
    Text(String),
    Many(Vec<HoverContents>),
    Marked(Marked),
    Other(serde::de::IgnoredAny),
}

/// `MarkupContent` or a `MarkedString` with its language.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Marked {
    #[serde(deserialize_with = "lenient")]
    pub value: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub language: Option<String>,
}

/// A `DocumentSymbol` (nested) or a `SymbolInformation` (flat, with a location), as
/// `documentSymbol` answers; also what `workspace/symbol` answers, by its location.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Symbol {
    #[serde(deserialize_with = "lenient")]
    pub name: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub kind: u64,
    #[serde(deserialize_with = "lenient")]
    pub selection_range: Option<Range>,
    #[serde(deserialize_with = "lenient")]
    pub location: Option<Location>,
    #[serde(deserialize_with = "lenient")]
    pub range: Option<Range>,
    #[serde(deserialize_with = "lenient")]
    pub children: Option<Vec<Symbol>>,
}

impl Symbol {
    /// The 0-based line it is named on.
    pub fn line(&self) -> u32 {
        let location = self.location.as_ref().and_then(|l| l.range);
        self.selection_range
            .or(location)
            .or(self.range)
            .map_or(0, |r| r.start.line)
    }
}

/// A code action or a command, as `textDocument/codeAction` answers.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CodeAction {
    #[serde(deserialize_with = "lenient")]
    pub title: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub kind: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub is_preferred: bool,
    /// Why it cannot be applied now, when the server says so.
    #[serde(deserialize_with = "lenient")]
    pub disabled: Option<Disabled>,
    /// Its edit, when the server computed it.
    #[serde(deserialize_with = "lenient")]
    pub edit: Option<WorkspaceEdit>,
    /// A command to run: an object for an action, a method name for a bare command.
    pub command: Value,
    /// The bare command's arguments.
    pub arguments: Value,
    /// What `codeAction/resolve` needs back.
    pub data: Value,
}

/// `disabled` of a code action.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Disabled {
    #[serde(deserialize_with = "lenient")]
    pub reason: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn a_rename_filter_is_a_glob_over_the_absolute_path() {
        let filters: FileOperationFilters = read(json!({"filters": [
            {"scheme": "file", "pattern": {"glob": "**/*.{ts,tsx}", "matches": "file"}},
            {"pattern": {"glob": "**/SRC", "matches": "folder", "options": {"ignoreCase": true}}},
        ]}));
        assert!(filters.cover(Path::new("/w/pkg/a.ts"), false));
        assert!(filters.cover(Path::new("/w/b.tsx"), false));
        assert!(!filters.cover(Path::new("/w/a.py"), false));
        assert!(!filters.cover(Path::new("/w/a.ts"), true));
        assert!(filters.cover(Path::new("/w/src"), true));
        assert!(!filters.cover(Path::new("/w/src"), false));
    }

    #[test]
    fn the_capabilities_we_offer_are_the_ones_we_always_sent() {
        let sent = serde_json::to_value(client_capabilities()).unwrap();
        let before = json!({
            "general": {"positionEncodings": ["utf-8", "utf-16"]},
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "applyEdit": true,
                "workspaceEdit": {
                    "documentChanges": true,
                    "resourceOperations": ["create", "rename", "delete"],
                },
                "symbol": {"dynamicRegistration": false},
                "fileOperations": {"willRename": true},
            },
            "window": {"workDoneProgress": true},
            "textDocument": {
                "synchronization": {"didSave": true, "dynamicRegistration": false},
                "hover": {"contentFormat": ["markdown", "plaintext"]},
                "definition": {"linkSupport": true},
                "typeDefinition": {"linkSupport": true},
                "implementation": {"linkSupport": true},
                "references": {},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
                "diagnostic": {"dynamicRegistration": false},
                "rename": {"prepareSupport": true},
                "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": [
                    "", "quickfix", "refactor", "refactor.extract", "refactor.inline",
                    "refactor.rewrite", "source", "source.organizeImports"]}}},
            },
            "offsetEncoding": ["utf-8", "utf-16"],
            "experimental": {"serverStatusNotification": true},
        });
        assert_eq!(sent, before);
    }

    #[test]
    fn a_file_that_is_not_utf8_keeps_its_bytes_in_the_uri() {
        use std::os::unix::ffi::OsStrExt as _;
        let raw = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/caf\xe9 x.rs"));
        assert_eq!(uri(raw).unwrap().as_str(), "file:///tmp/caf%E9%20x.rs");
        let params = to_params("m", at(raw, 3, 7).unwrap()).unwrap();
        assert_eq!(
            params,
            json!({"textDocument": {"uri": "file:///tmp/caf%E9%20x.rs"},
                   "position": {"line": 3, "character": 7}})
        );
    }

    /// A message read from its text (as the wire gives it) reads as it does from a value.
    #[test]
    fn text_and_value_read_alike() {
        fn alike<T: DeserializeOwned + Default + std::fmt::Debug>(value: Value) {
            let text: Box<serde_json::value::RawValue> =
                serde_json::from_str(&value.to_string()).unwrap();
            let from_text: T = read(tether_rpc::Payload::Raw(text));
            let from_value: T = read(value);
            assert_eq!(format!("{from_text:?}"), format!("{from_value:?}"));
        }
        // A publication reads its text either way: a value is written out first.
        let published = json!({"uri": "file:///a", "version": "x",
            "diagnostics": [{"message": "m\"q", "range": {"start": {"line": 2, "character": -1}},
                             "severity": 2.5, "code": "E1", "source": 3}, "junk", null]});
        let raw = tether_rpc::Payload::Value(published).into_raw();
        let read: PublishedText = serde_json::from_str(raw.get()).unwrap();
        assert_eq!(
            (read.uri.as_deref(), read.version),
            (Some("file:///a"), None)
        );
        assert_eq!(read.items().len(), 1);
        assert_eq!(read.items()[0].message, "m\"q");
        alike::<DiagnosticReport>(json!({"kind": "full", "items": {"message": "one"}}));
        alike::<DiagnosticReport>(json!({"kind": "unchanged", "items": null}));
        alike::<Vec<Location>>(json!([{"uri": "file:///a"}, 5]));
    }

    #[test]
    fn what_we_read_takes_a_default_for_what_is_missing_null_or_odd() {
        let d: Diagnostic = read(json!({"range": null, "severity": "high", "code": 7,
                                        "message": null, "data": {"x": 1}}));
        assert_eq!(d.range, Range::default());
        assert_eq!(
            (d.level(), d.code_tag(), d.message.as_str()),
            (1, " [7]".into(), "")
        );
        let text = r#"{"uri": "file:///a", "version": null,
            "diagnostics": [{"message": "m", "range": {"start": {"line": 2}}}, "junk"]}"#;
        let p: PublishedText = serde_json::from_str(text).unwrap();
        assert_eq!(p.version, None);
        assert_eq!(p.items().len(), 1);
        assert_eq!(p.items()[0].range.start.line, 2);
        let caps: InitializeResult = read(json!({"capabilities": {
            "hoverProvider": true, "definitionProvider": false, "referencesProvider": null,
            "renameProvider": {"prepareProvider": true}, "diagnosticProvider": {
                "interFileDependencies": true, "workspaceDiagnostics": false}},
            "offsetEncoding": "utf-8"}));
        let c = &caps.capabilities;
        assert!(c.hover_provider.on && !c.definition_provider.on && !c.references_provider.on);
        assert!(c.rename_provider.options.prepare_provider);
        assert!(c.diagnostic_provider.on && !c.diagnostic_provider.options.workspace_diagnostics);
        assert_eq!(caps.offset_encoding.as_deref(), Some("utf-8"));
        let nothing: InitializeResult = read(json!("not an object"));
        assert!(!nothing.capabilities.hover_provider.on);
    }

    #[test]
    fn locations_come_as_one_a_list_or_links() {
        let one: Vec<Location> = many(json!({"uri": "file:///a",
            "range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 3}}}));
        assert_eq!(one[0].target().unwrap().0, "file:///a");
        let links: Vec<Location> = many(json!([{"targetUri": "file:///b",
            "targetRange": {}, "targetSelectionRange": {"start": {"line": 4, "character": 0}}},
            {"uri": "file:///c"}, 5]));
        assert_eq!(links.len(), 2);
        assert_eq!(
            links[0].target().unwrap(),
            (
                "file:///b",
                Position {
                    line: 4,
                    character: 0
                }
            )
        );
        assert!(
            links[1].target().is_none(),
            "a location without a range points nowhere"
        );
        assert!(many::<Location>(Value::Null).is_empty());
    }

    #[test]
    fn workspace_edits_come_as_changes_or_document_changes() {
        let edit: ApplyWorkspaceEditParams = read(json!({"edit": {
            "changes": {"file:///a": [{"range": {"start": {"line": 0, "character": 1},
                "end": {"line": 0, "character": 2}}, "newText": "x"}]},
            "documentChanges": [
                {"textDocument": {"uri": "file:///b", "version": null},
                 "edits": [{"range": {}, "newText": "y", "annotationId": "1"}]},
                {"kind": "rename", "oldUri": "file:///b", "newUri": "file:///c"}]}}));
        let e = &edit.edit;
        assert_eq!(e.changes["file:///a"].0[0].new_text, "x");
        assert_eq!(e.document_changes[0].text_document.uri, "file:///b");
        assert_eq!(e.document_changes[1].kind.as_deref(), Some("rename"));
        assert_eq!(e.document_changes[1].new_uri, "file:///c");
    }
}
