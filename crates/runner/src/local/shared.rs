//! What the GPUs' workers of a campaign share while they work: the queue of units, the book
//! of baselines, the runs made, and why and whether they stop.

use colloc_plan::Plan;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::queue::{self, BaselineBook, Todo};
use crate::summary::RunOutcome;

/// Why the GPUs stopped before the selection's end.
pub(super) enum Stop {
    /// A run could pass the time budget (the text names it; the count of runs left follows).
    Budget(String),
    Other(String),
}

/// What the GPUs of a campaign share while they work.
pub(super) struct Shared<'a> {
    /// The plan the runs come from.
    pub plan: &'a Plan,
    /// The runs to make, in units a GPU takes whole.
    pub units: Mutex<VecDeque<Vec<Todo<'a>>>>,
    /// Runs to make: the selection and the baselines added to it.
    pub total: AtomicUsize,
    /// Which baselines each GPU has or is about to make (none with `--no-host-baselines`).
    pub book: Option<Mutex<BaselineBook>>,
    made: Mutex<Vec<RunOutcome>>,
    /// Runs begun, for the progress's `run N/M`.
    pub started_runs: AtomicUsize,
    /// Every GPU stops after its run in progress.
    pub stop: AtomicBool,
    /// The first reason to stop.
    stopped: Mutex<Option<Stop>>,
    pub interrupted: AtomicBool,
    /// When the invocation started: the time budget counts from here.
    pub started: Instant,
}

impl<'a> Shared<'a> {
    /// The selected runs `todo` of `plan` in their units, with the book of baselines when
    /// each host measures its own.
    pub(super) fn new(plan: &'a Plan, todo: Vec<Todo<'a>>, book: Option<BaselineBook>, started: Instant) -> Self {
        Shared {
            plan,
            total: AtomicUsize::new(todo.len()),
            units: Mutex::new(queue::units(todo)),
            book: book.map(Mutex::new),
            made: Mutex::new(Vec::new()),
            started_runs: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            stopped: Mutex::new(None),
            interrupted: AtomicBool::new(false),
            started,
        }
    }
}

impl Shared<'_> {
    /// Every GPU stops after its run in progress.
    pub(super) fn stop_all(&self, why: Stop) {
        self.stop.store(true, Ordering::SeqCst);
        self.stopped.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(why);
    }

    /// Stops this GPU only (the others may still fit theirs in the budget).
    pub(super) fn stop_here(&self, why: Stop) {
        self.stopped.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(why);
    }

    /// A stop signal arrived: every GPU stops, `why` says where it found the campaign.
    pub(super) fn interrupt(&self, why: String) {
        self.interrupted.store(true, Ordering::SeqCst);
        self.stop_all(Stop::Other(why));
    }

    pub(super) fn add_made(&self, run: RunOutcome) {
        self.made.lock().unwrap_or_else(|p| p.into_inner()).push(run);
    }

    pub(super) fn take_made(&self) -> Vec<RunOutcome> {
        std::mem::take(&mut *self.made.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub(super) fn take_stopped(&self) -> Option<Stop> {
        self.stopped.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}
