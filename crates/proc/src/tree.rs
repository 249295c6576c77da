//! Every descendant, not only the process groups. A group kill misses whatever left the group
//! (`setsid`, `setpgrp`, a double-forked daemon, debugpy's debuggee), so tether makes itself a
//! child subreaper: an orphan of anything it started re-parents to tether instead of init and
//! stays in tether's tree, where a walk of `/proc` finds it.
//!
//! Which child a descendant belongs to is decided by the nearest of its ancestors (itself
//! included) that is that child, is in that child's group, was seen under that child by the
//! census, or carries that child's mark in its environment ([`OWNER_VAR`]). The mark is what
//! survives once the parents are gone; the census (every [`CENSUS_EVERY`]) remembers lineage
//! for a descendant that scrubs its environment, and reports the escaped ones to the reaper,
//! which has no tree to walk once tether is dead. A cgroup per run would be exact, but no
//! delegated cgroup v2 sub-tree exists on the machines tether runs on (a hybrid v1 hierarchy
//! here, root-owned), so this needs no privilege and no setup.

use std::collections::{HashMap, HashSet};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use tether_base::lock;

use rustix::process::{Pid, Signal, WaitOptions};

/// The variable each child (and so each of its descendants) carries: `RUN.SERIAL`, where RUN
/// is tether's pid and start time, so a descendant whose parents are gone still names its child.
pub(crate) const OWNER_VAR: &str = "TETHER_PROC_OWNER";
/// How often the census walks the tree while tether has children and they change.
const CENSUS_EVERY: Duration = Duration::from_millis(500);
/// How long the census may wait between walks once the tree stays the same: each walk reads
/// every thread's children, which cost a pyright write 4 ms; a spawn or any change in the
/// tree brings it back to [`CENSUS_EVERY`].
const CENSUS_CALM: Duration = Duration::from_secs(4);
/// Rounds of stop-then-look before a sweep kills; each round stops what the last one forked.
const STOP_ROUNDS: usize = 20;
/// How long a sweep waits for what it killed to die, so it can reap the orphans among them.
const DEATH_WAIT: Duration = Duration::from_millis(500);

/// A process, by pid and start time (clock ticks after boot), so a reused pid is not mistaken.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Ident {
    pub(crate) pid: u32,
    pub(crate) start: u64,
}

/// The fields of `/proc/PID/stat` the tree needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stat {
    pub(crate) ppid: u32,
    pub(crate) pgid: u32,
    pub(crate) sid: u32,
    pub(crate) start: u64,
    pub(crate) zombie: bool,
}

/// Reads `/proc/PID/stat`; `None` once the process is gone (reaped).
pub(crate) fn read_stat(pid: u32) -> Option<Stat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold anything, so fields start after the last.
    let mut f = stat[stat.rfind(')')? + 1..].split_whitespace();
    let zombie = f.next()? == "Z";
    let ppid = f.next()?.parse().ok()?;
    let pgid = f.next()?.parse().ok()?;
    let sid = f.next()?.parse().ok()?;
    // starttime is field 22 of the file, the 17th after the session.
    let start = f.nth(15)?.parse().ok()?;
    Some(Stat {
        ppid,
        pgid,
        sid,
        start,
        zombie,
    })
}

/// Every process the walk can read, by pid.
fn snapshot() -> HashMap<u32, Stat> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            Some((pid, read_stat(pid)?))
        })
        .collect()
}

/// The processes below `me`, by pid, read down each thread's list of children (a process
/// forked by any thread is on that thread's list, an orphan on its new parent's): the walk
/// costs what tether started, not every process on the machine; with `deep` false, only
/// tether's own children. `None` from a kernel that keeps no such lists.
fn descendants(me: u32, deep: bool) -> Option<HashMap<u32, Stat>> {
    let mut found = HashMap::new();
    let mut todo = vec![me];
    while let Some(pid) = todo.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let list = match std::fs::read_to_string(task.path().join("children")) {
                Ok(list) => list,
                Err(e) if pid == me && e.kind() == std::io::ErrorKind::NotFound => return None,
                Err(_) => continue,
            };
            for child in list
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
            {
                if let std::collections::hash_map::Entry::Vacant(slot) = found.entry(child)
                    && let Some(stat) = read_stat(child)
                {
                    slot.insert(stat);
                    if deep {
                        todo.push(child);
                    }
                }
            }
        }
    }
    Some(found)
}

/// The value of [`OWNER_VAR`] in the environment `pid` was started with, if it carries one.
fn mark_of(pid: u32) -> Option<String> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{OWNER_VAR}=");
    env.split(|b| *b == 0)
        .find_map(|kv| kv.strip_prefix(prefix.as_bytes()))
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

/// A descendant of tether: the child it belongs to, if known, and its ancestor whose parent
/// is tether (itself, for a direct child or an orphan).
#[derive(Clone, Copy, Debug)]
struct Member {
    owner: Option<u64>,
    top: u32,
}

/// What tether knows of its children and their descendants.
pub(crate) struct Tree {
    me: Ident,
    pgid: u32,
    sid: u32,
    /// `PID.START` of tether, the first part of every mark.
    run: String,
    next_serial: u64,
    /// Direct children tether-proc started (tokio waits for them; the tree never does).
    spawned: HashMap<u32, u64>,
    /// Children not yet swept for the last time, by serial.
    leaders: HashMap<u64, Ident>,
    /// Escaped descendants the census saw, and the child each came from.
    lineage: HashMap<Ident, u64>,
    /// The reaper, which is tether's child but must outlive it.
    keep: Option<u32>,
    /// Woken when there is something for the census to watch.
    wake: std::sync::Arc<Condvar>,
    /// Children spawned so far: a new one has the census look soon.
    spawns: u64,
}

static TREE: OnceLock<Mutex<Tree>> = OnceLock::new();

/// Walks the census has made, for a test that it slows down once the tree stays the same.
static PASSES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many walks the census has made in this process.
pub fn census_passes() -> u64 {
    PASSES.load(std::sync::atomic::Ordering::Relaxed)
}

/// The tree, set up on first use: tether becomes a subreaper, the reaper and the census start.
pub(crate) fn tree() -> MutexGuard<'static, Tree> {
    let tree = TREE.get_or_init(|| {
        if let Err(e) = rustix::process::set_child_subreaper(Pid::from_raw(1)) {
            tracing::warn!("cannot become a child subreaper ({e}); orphans will go to init");
        }
        let pid = std::process::id();
        let stat = read_stat(pid);
        let start = stat.map_or(0, |s| s.start);
        let run = format!("{pid}.{start}");
        let keep = crate::reaper::start(&run);
        let wake = std::sync::Arc::new(Condvar::new());
        let _ = std::thread::Builder::new()
            .name("tether-census".into())
            .spawn(census);
        Mutex::new(Tree {
            me: Ident { pid, start },
            pgid: stat.map_or(0, |s| s.pgid),
            sid: stat.map_or(0, |s| s.sid),
            run,
            next_serial: 1,
            spawned: HashMap::new(),
            leaders: HashMap::new(),
            lineage: HashMap::new(),
            keep,
            wake,
            spawns: 0,
        })
    });
    lock(tree)
}

/// Makes tether a subreaper and starts the reaper now rather than at the first child, for a
/// binary that wants orphans adopted from its first moment.
pub fn init() {
    drop(tree());
}

/// Spawns `cmd` marked with a fresh serial, which it returns, recording the child before any
/// sweep can look, so a sweep never reaps a child whose exit status tokio is waiting for.
pub(crate) fn spawn(
    cmd: &mut tokio::process::Command,
) -> std::io::Result<(tokio::process::Child, u64)> {
    let mut tree = tree();
    let serial = tree.next_serial;
    tree.next_serial += 1;
    cmd.env(OWNER_VAR, format!("{}.{serial}", tree.run));
    let child = cmd.spawn()?;
    if let Some(pid) = child.id()
        && let Some(stat) = read_stat(pid)
    {
        tree.spawned.insert(pid, stat.start);
        let leader = Ident {
            pid,
            start: stat.start,
        };
        tree.leaders.insert(serial, leader);
        tree.spawns += 1;
        tree.wake.notify_all();
    }
    Ok((child, serial))
}

impl Tree {
    /// The child (serial) `pid` belongs to on its own account, not counting its ancestors.
    fn own_owner(&self, pid: u32, stat: &Stat, by_pid: &HashMap<u32, u64>) -> Option<u64> {
        if let Some(&serial) = by_pid.get(&pid)
            && self
                .leaders
                .get(&serial)
                .is_some_and(|l| l.start == stat.start)
        {
            return Some(serial);
        }
        // A live group keeps its leader's pid from being reused, so the group names the child.
        if let Some(&serial) = by_pid.get(&stat.pgid) {
            return Some(serial);
        }
        let ident = Ident {
            pid,
            start: stat.start,
        };
        if let Some(&serial) = self.lineage.get(&ident) {
            return Some(serial);
        }
        let mark = mark_of(pid)?;
        let (run, serial) = mark.rsplit_once('.')?;
        (run == self.run).then(|| serial.parse().ok()).flatten()
    }

    /// Every descendant of tether in `snap` (the reaper's own aside), with its owner.
    fn members(&self, snap: &HashMap<u32, Stat>) -> HashMap<u32, Member> {
        // A leader whose pid now names another process no longer speaks for its group (a pid
        // in use as a group id is never reused, so a dead leader's own group still counts).
        let by_pid: HashMap<u32, u64> = self
            .leaders
            .iter()
            .filter(|(_, l)| snap.get(&l.pid).is_none_or(|s| s.start == l.start))
            .map(|(s, l)| (l.pid, *s))
            .collect();
        // None: known not to be a descendant.
        let mut known: HashMap<u32, Option<Member>> = HashMap::new();
        for &pid in snap.keys() {
            let mut chain = Vec::new();
            let mut at = pid;
            let found = loop {
                if let Some(k) = known.get(&at) {
                    break *k;
                }
                if Some(at) == self.keep || at <= 1 || chain.len() > 4096 {
                    break None;
                }
                let Some(stat) = snap.get(&at) else {
                    break None;
                };
                chain.push((at, stat));
                if stat.ppid == self.me.pid {
                    break Some(Member {
                        owner: None,
                        top: at,
                    });
                }
                at = stat.ppid;
            };
            // Down the chain from the top: the nearest ancestor with an owner decides.
            let mut above = found;
            for (at, stat) in chain.into_iter().rev() {
                let member = above.map(|m| Member {
                    owner: self.own_owner(at, stat, &by_pid).or(m.owner),
                    top: m.top,
                });
                known.insert(at, member);
                above = member;
            }
        }
        known
            .into_iter()
            .filter_map(|(pid, m)| Some((pid, m?)))
            .collect()
    }

    /// True when `pid`, tether's child, came to tether as an orphan rather than from a fork
    /// of tether's own (a host's child started without tether-proc is left alone).
    fn adopted(&self, pid: u32, stat: &Stat) -> bool {
        if self.spawned.get(&pid) == Some(&stat.start) {
            return false;
        }
        let ident = Ident {
            pid,
            start: stat.start,
        };
        self.lineage.contains_key(&ident)
            || stat.sid != self.sid
            || (stat.pgid != pid && stat.pgid != self.pgid)
    }
}

/// Stops, then kills, every descendant `pick` chooses: stopped first, so none forks past the
/// walk; then the orphans among the dead are reaped. Returns how many were killed.
fn stop_and_kill(pick: impl Fn(&Tree, u32, &Stat, &Member) -> bool) -> usize {
    let mut stopped: Vec<Ident> = Vec::new();
    let mut seen: HashSet<u32> = HashSet::new();
    for _ in 0..STOP_ROUNDS {
        let tree = tree();
        let snap = snapshot();
        let fresh: Vec<Ident> = tree
            .members(&snap)
            .iter()
            .filter_map(|(&pid, m)| {
                let stat = snap.get(&pid)?;
                (!stat.zombie && !seen.contains(&pid) && pick(&tree, pid, stat, m)).then_some(
                    Ident {
                        pid,
                        start: stat.start,
                    },
                )
            })
            .collect();
        drop(tree);
        if fresh.is_empty() {
            break;
        }
        for id in fresh {
            signal(id, Signal::STOP);
            seen.insert(id.pid);
            stopped.push(id);
        }
    }
    for id in &stopped {
        signal(*id, Signal::KILL);
    }
    let end = Instant::now() + DEATH_WAIT;
    while stopped.iter().any(|id| crate::is_running(id.pid)) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(5));
    }
    reap_orphans();
    stopped.len()
}

/// Sends `sig` to the process, unless its pid now names another one; one already gone is not
/// an error.
fn signal(id: Ident, sig: Signal) {
    if read_stat(id.pid).is_some_and(|s| s.start == id.start)
        && let Some(pid) = i32::try_from(id.pid).ok().and_then(Pid::from_raw)
    {
        match rustix::process::kill_process(pid, sig) {
            Ok(()) | Err(rustix::io::Errno::SRCH) => {}
            Err(e) => tracing::warn!(pid = id.pid, ?sig, "signalling a descendant failed: {e}"),
        }
    }
}

/// Kills every descendant of child `serial` (the child itself included), wherever it went.
pub(crate) fn sweep(serial: u64) -> usize {
    stop_and_kill(|_, _, _, m| m.owner == Some(serial))
}

/// Sends SIGTERM to every descendant of child `serial` that left its group, and remembers them
/// under the child: the polite first step of a shutdown, after which the leader may be gone.
pub(crate) fn terminate_escaped(serial: u64) {
    let mut tree = tree();
    let snap = snapshot();
    let leader = tree.leaders.get(&serial).map(|l| l.pid);
    for (pid, m) in tree.members(&snap) {
        let Some(stat) = snap.get(&pid) else { continue };
        if m.owner == Some(serial) && Some(stat.pgid) != leader && !stat.zombie {
            let id = Ident {
                pid,
                start: stat.start,
            };
            tree.lineage.insert(id, serial);
            signal(id, Signal::TERM);
        }
    }
}

/// Forgets child `serial` after its last sweep.
pub(crate) fn release(serial: u64) {
    let mut tree = tree();
    tree.leaders.remove(&serial);
    tree.lineage.retain(|_, s| *s != serial);
}

/// Kills every descendant of tether that no living child owns and that tether, not a host's
/// own child, started: what is left at the end of a run. Returns how many were killed.
pub fn sweep_strays() -> usize {
    stop_and_kill(|tree, _, _, m| {
        if m.owner.is_some_and(|s| tree.leaders.contains_key(&s)) {
            return false;
        }
        let Some(top) = read_stat(m.top) else {
            return false;
        };
        m.owner.is_some() || tree.spawned.contains_key(&m.top) || tree.adopted(m.top, &top)
    })
}

/// Reaps the zombies that came to tether as orphans; tether's own children are tokio's to wait.
pub(crate) fn reap_orphans() {
    // Holding the tree keeps a child from being spawned and not yet recorded meanwhile.
    let tree = tree();
    let below = descendants(tree.me.pid, false).unwrap_or_else(snapshot);
    for (pid, stat) in below {
        if stat.ppid == tree.me.pid
            && stat.zombie
            && Some(pid) != tree.keep
            && tree.adopted(pid, &stat)
        {
            let Some(zombie) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
                continue;
            };
            if let Err(e) = rustix::process::waitpid(Some(zombie), WaitOptions::NOHANG) {
                tracing::debug!(pid, "reaping an adopted zombie failed: {e}");
            }
        }
    }
}

/// The census: while tether has children, it remembers which child each escaped descendant
/// came from, tells the reaper about them, and reaps adopted zombies.
fn census() {
    let mut every = CENSUS_EVERY;
    let mut seen: Vec<u32> = Vec::new();
    loop {
        {
            let mut tree = tree();
            while tree.leaders.is_empty() && tree.lineage.is_empty() {
                let wake = tree.wake.clone();
                tree = wake.wait(tree).unwrap_or_else(|p| p.into_inner());
            }
            // A child spawned meanwhile ends a long wait: what it forks is looked at soon.
            let spawns = tree.spawns;
            let wake = tree.wake.clone();
            let (tree, _) = wake
                .wait_timeout_while(tree, every, |t| t.spawns == spawns)
                .unwrap_or_else(|p| p.into_inner());
            if tree.spawns != spawns {
                every = CENSUS_EVERY;
            }
        }
        let now = census_pass();
        reap_orphans();
        every = match now == seen {
            true => (every * 2).min(CENSUS_CALM),
            false => CENSUS_EVERY,
        };
        seen = now;
    }
}

/// One walk of the census; gives every descendant it saw, by pid in order.
fn census_pass() -> Vec<u32> {
    PASSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut tree = tree();
    let snap = descendants(tree.me.pid, true).unwrap_or_else(snapshot);
    let mut seen: Vec<u32> = snap.keys().copied().collect();
    seen.sort_unstable();
    let groups: HashSet<u32> = tree.leaders.values().map(|l| l.pid).collect();
    let mut escaped = HashMap::new();
    for (pid, m) in tree.members(&snap) {
        let Some(stat) = snap.get(&pid) else { continue };
        if stat.zombie || groups.contains(&stat.pgid) {
            continue;
        }
        if let Some(owner) = m.owner {
            let id = Ident {
                pid,
                start: stat.start,
            };
            escaped.insert(id, owner);
        }
    }
    for id in escaped.keys() {
        if !tree.lineage.contains_key(id) {
            crate::reaper::report(id.pid, id.start);
        }
    }
    for id in tree.lineage.keys() {
        if !escaped.contains_key(id) && snap.get(&id.pid).is_none_or(|s| s.start != id.start) {
            crate::reaper::unreport(id.pid, id.start);
        }
    }
    // Keep what is still alive (and was remembered by a shutdown), add what is new.
    tree.lineage
        .retain(|id, _| snap.get(&id.pid).is_some_and(|s| s.start == id.start));
    tree.lineage.extend(escaped);
    tree.spawned
        .retain(|pid, start| snap.get(pid).is_some_and(|s| s.start == *start));
    seen
}

#[cfg(test)]
mod tests;
