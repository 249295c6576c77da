//! The run's debug sessions: one per conversation, kept from `launch` or `attach` to
//! `terminate`, and ended by a timer when their time to live runs out.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tether_base::lock;

use serde_json::Value;
use tether_tool::{CallCx, NoticeQueue, ToolError};

use crate::error::LocateError;
use crate::op::{Attach, Begin, Launch, Op, Start};
use crate::session::{Limits, Session, Where};

/// The run's debug sessions, one per conversation, and breakpoints set before a launch.
pub struct Sessions {
    pub(crate) live: tokio::sync::Mutex<HashMap<String, Arc<Session>>>,
    /// Why a conversation's session was ended by its timer, said on its next call.
    pub(crate) expired: Mutex<HashMap<String, String>>,
    pub(crate) breakpoints: Mutex<HashMap<String, BTreeMap<PathBuf, Vec<usize>>>>,
    pub(crate) limits: Limits,
    pub(crate) ttl: std::time::Duration,
    /// The built-in adapters with `[debug.adapters]` merged over them.
    pub(crate) catalog: crate::catalog::Catalog,
    /// The conversation of a run that names none (`tether serve` without `--conversation`).
    pub(crate) fallback: String,
    /// The run's notices: an expiry is said on the next result, whichever tool it is from.
    pub(crate) notices: NoticeQueue,
}

impl Sessions {
    /// The conversation's session; an error, once, when its timer ended it since the last call.
    async fn current(&self, conversation: &str) -> Result<Option<Arc<Session>>, ToolError> {
        let live = self.live.lock().await;
        if let Some(session) = live.get(conversation) {
            return Ok(Some(session.clone()));
        }
        match lock(&self.expired).remove(conversation) {
            Some(why) => Err(ToolError::failed(format!("{why}; launch again"))),
            None => Ok(None),
        }
    }

    /// Ends `session` when its time to live runs out, without waiting for a call: a program
    /// left running must not outlive the limit because nobody asked about it again.
    fn expire_later(self: &Arc<Self>, conversation: &str, session: &Arc<Session>) {
        let (sessions, weak) = (Arc::downgrade(self), Arc::downgrade(session));
        let conversation = conversation.to_string();
        let deadline = tokio::time::Instant::from_std(session.began + self.ttl);
        tokio::spawn(async move {
            tokio::time::sleep_until(deadline).await;
            // A session terminated before its deadline is gone, or replaced by another.
            if let (Some(sessions), Some(session)) = (sessions.upgrade(), weak.upgrade()) {
                sessions.expire(&conversation, session).await;
            }
        });
    }

    async fn expire(&self, conversation: &str, session: Arc<Session>) {
        let why = {
            let mut live = self.live.lock().await;
            if !live
                .get(conversation)
                .is_some_and(|s| Arc::ptr_eq(s, &session))
            {
                return;
            }
            live.remove(conversation);
            let program = session.program.strip_prefix(&session.workspace);
            let why = format!(
                "the debug session on {} reached its time limit ({} s, `[debug] ttl_s`) and was \
                 terminated: the adapter and the program were ended",
                program.unwrap_or(&session.program).display(),
                self.ttl.as_secs()
            );
            // Said before the lock goes, so no call finds neither the session nor why.
            lock(&self.expired).insert(conversation.to_string(), why.clone());
            why
        };
        session.end_because(why.clone()).await;
        self.notices.push_keyed("debug", conversation, why);
    }

    pub(crate) async fn act(
        self: &Arc<Self>,
        cx: &CallCx,
        conversation: &str,
        root: &std::path::Path,
        op: Op,
    ) -> Result<String, ToolError> {
        let session = self.current(conversation).await?;
        let none = || {
            ToolError::invalid("no debug session runs: set `breakpoints`, then `launch` a program")
        };
        match op {
            Op::Adapters => Ok(crate::locate::report(&self.catalog, root).await),
            Op::Status => Ok(match session {
                Some(s) => status(&s, root).await,
                None => "no debug session runs".into(),
            }),
            Op::Breakpoints { file, lines } => {
                let file = file.as_str();
                if let Some(bad) = lines.iter().find(|l| **l == 0) {
                    return Err(ToolError::invalid(format!(
                        "line {bad}: lines are 1-based; the first line is 1"
                    )));
                }
                let abs = cx.workspace().resolve_read(file)?;
                if !abs.is_file() {
                    return Err(not_a_file(cx, file, "a source file's").await);
                }
                lock(&self.breakpoints)
                    .entry(conversation.to_string())
                    .or_default()
                    .insert(abs.clone(), lines.clone());
                match session {
                    Some(s) => Ok(s.set_breakpoints(&abs, &lines).await?),
                    None => Ok(format!(
                        "{file}: {} set; sent to the adapter at launch",
                        tether_tool::counted(lines.len(), "breakpoint")
                    )),
                }
            }
            Op::Start(Start::Launch(launch)) => {
                self.launch(cx, conversation, root, &launch, session).await
            }
            Op::Start(Start::Attach(attach)) => {
                self.attach(cx, conversation, root, &attach, session).await
            }
            Op::Output => {
                let s = session.ok_or_else(none)?;
                let (text, cut) = s.output();
                Ok(match (text.is_empty(), cut) {
                    (true, _) => "no output yet".into(),
                    (false, 0) => text,
                    (false, n) => format!(
                        "(the first {n} bytes were dropped; the last 64 KiB are kept)\n{text}"
                    ),
                })
            }
            Op::Terminate => {
                let s = session.ok_or_else(none)?;
                self.live.lock().await.remove(conversation);
                s.end_because("`terminate` ended the session".into()).await;
                Ok(match (s.attached(), &s.adapter.kind.detach_note) {
                    (true, Some(note)) => format!("detached; {note}"),
                    (true, None) => "detached: the program attached to was left running".into(),
                    (false, _) => format!(
                        "terminated the session on {}; the adapter and the program are gone",
                        s.program.strip_prefix(root).unwrap_or(&s.program).display()
                    ),
                })
            }
            Op::Live(live) => {
                let s = session.ok_or_else(none)?;
                crate::ops::stopped_ops(&s, cx.workspace(), live).await
            }
        }
    }

    /// Attaches to a program waiting for a debugger on `port` (see
    /// [`crate::catalog::Catalog::attach_howto`]); the program is not ours to kill at the end.
    async fn attach(
        self: &Arc<Self>,
        cx: &CallCx,
        conversation: &str,
        root: &std::path::Path,
        asked: &Attach,
        session: Option<Arc<Session>>,
    ) -> Result<String, ToolError> {
        let (port, adapter) = (asked.port, &asked.adapter);
        none_running(session, root, "attaching").await?;
        let invalid = |e: LocateError| ToolError::invalid(e.to_string());
        let id = match adapter {
            Some(id) => id.clone(),
            None => crate::locate::attach_adapter(&self.catalog, root).map_err(invalid)?,
        };
        let found = crate::locate::for_attach(&self.catalog, &id, root)
            .await
            .map_err(invalid)?;
        let attach = crate::locate::attach_args(&found, port).map_err(invalid)?;
        let target = root.join(format!("(the program on port {port})"));
        let session = match found.argv.is_empty() {
            true => Session::connect(found, port, target, root.to_path_buf(), self.limits).await,
            false => Session::start(found, target, root.to_path_buf(), self.limits).await,
        }
        .map_err(|e| {
            ToolError::failed(format!(
                "{e}\nthe program must wait on the port: {}",
                self.catalog.attach_howto()
            ))
        })?;
        let said = format!("attached to port {port} under {id}");
        self.begin(
            conversation,
            cx.workspace(),
            session,
            Begin::Attach,
            attach,
            said,
        )
        .await
    }

    /// The breakpoints set for `conversation`, to send at launch or attach.
    fn pending_breakpoints(&self, conversation: &str) -> Vec<(PathBuf, Vec<usize>)> {
        lock(&self.breakpoints)
            .get(conversation)
            .map(|m| m.iter().map(|(p, l)| (p.clone(), l.clone())).collect())
            .unwrap_or_default()
    }

    async fn launch(
        self: &Arc<Self>,
        cx: &CallCx,
        conversation: &str,
        root: &std::path::Path,
        asked: &Launch,
        session: Option<Arc<Session>>,
    ) -> Result<String, ToolError> {
        let (program, args, adapter) = (&asked.program, &asked.args, &asked.adapter);
        none_running(session, root, "launching another").await?;
        let abs = cx.workspace().resolve_read(program)?;
        if !abs.is_file() {
            return Err(not_a_file(cx, program, "the program's").await);
        }
        let id = match (adapter, self.catalog.for_program(&abs)) {
            (Some(id), _) => id.clone(),
            (None, Some(kind)) => kind.id.clone(),
            (None, None) => {
                return Err(ToolError::invalid(format!(
                    "cannot tell which adapter debugs {program}: name one with `adapter` \
                     ({}), or launch the built program itself",
                    self.catalog.ids().join(", ")
                )));
            }
        };
        let found = crate::locate::find(&self.catalog, &id, &abs, root)
            .await
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let interpreter = found.interpreter.clone();
        let launch = crate::locate::launch_args(&found, &abs, args);
        let session = Session::start(found, abs.clone(), root.to_path_buf(), self.limits).await?;
        // Refused once the adapter has answered `initialize`, so an adapter that cannot start
        // says that first.
        let launch = match launch {
            Ok(launch) => launch,
            Err(why) => {
                session.end().await;
                return Err(ToolError::failed(why.to_string()));
            }
        };
        let said = format!(
            "launched {program} under {}{}",
            session.adapter.id,
            interpreter.map_or(String::new(), |i| format!(" with {i}"))
        );
        self.begin(
            conversation,
            cx.workspace(),
            session,
            Begin::Launch,
            launch,
            said,
        )
        .await
    }

    /// Launches or attaches (`command`) a started session with the breakpoints set so far,
    /// keeps it for `conversation`, and shows `said`, the breakpoints and the first stop.
    async fn begin(
        self: &Arc<Self>,
        conversation: &str,
        ws: &tether_fs::Workspace,
        session: Session,
        begin: Begin,
        args: Value,
        said: String,
    ) -> Result<String, ToolError> {
        let session = Arc::new(session);
        let breakpoints = self.pending_breakpoints(conversation);
        let verified = match session.launch(begin, args, &breakpoints).await {
            Ok(verified) => verified,
            Err(e) => {
                session.end().await;
                return Err(ToolError::failed(match begin {
                    Begin::Attach => format!(
                        "{e}\nthe program must wait on the port: {}",
                        self.catalog.attach_howto()
                    ),
                    Begin::Launch => e.to_string(),
                }));
            }
        };
        self.live
            .lock()
            .await
            .insert(conversation.to_string(), session.clone());
        self.expire_later(conversation, &session);
        let mut out = vec![said];
        out.extend(verified.into_iter().map(|s| format!("breakpoints: {s}")));
        out.push(crate::ops::snapshot(&session, ws).await);
        Ok(out.join("\n"))
    }
}

/// What a session is doing, in a line.
async fn status(s: &Session, root: &std::path::Path) -> String {
    let at = match s.where_now() {
        Where::Running => "running".to_string(),
        Where::Stopped { thread, reason } => format!("stopped ({reason}) on thread {thread}"),
        Where::Ended(code) => format!(
            "ended{}",
            code.map_or(String::new(), |c| format!(" with exit code {c}"))
        ),
    };
    let program = s
        .program
        .strip_prefix(root)
        .unwrap_or(&s.program)
        .display()
        .to_string();
    format!(
        "{} session on {program}: {at}, for {} s",
        s.adapter.id,
        s.began.elapsed().as_secs()
    )
}

/// `file` is not a file: said with the workspace files most like it.
async fn not_a_file(cx: &CallCx, file: &str, whose: &str) -> ToolError {
    let near = cx.similar_files(file).await;
    ToolError::invalid(format!(
        "{file} is not a file of the workspace{}; give {whose} path from the workspace root",
        tether_fs::suggest::did_you_mean(&near)
    ))
}

/// Refuses to begin a session while `session` runs, saying what to do first.
async fn none_running(
    session: Option<Arc<Session>>,
    root: &std::path::Path,
    doing: &str,
) -> Result<(), ToolError> {
    match session {
        Some(s) => Err(ToolError::invalid(format!(
            "a debug session already runs ({}); `terminate` it before {doing}",
            status(&s, root).await
        ))),
        None => Ok(()),
    }
}
