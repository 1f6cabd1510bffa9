// Package run is the run layer: everything a training run needs besides
// its model, its step, its evaluation and its tables, shared by every
// trainer (experiments/images, experiments/gpt, and any trainer after them).
//
// A run lives in a directory (Options.Out) that holds its JSON-lines log
// (LogFile), its checkpoint (CheckpointFile, and the previous one) and, once
// finished, its result (ResultFile). The run layer owns that directory:
//
//   - a directory is psclip's by the Record written into it (RecordFile)
//     before any other file, naming its kind and its owner (the user's
//     command, or the experiment whose run it is), never by the names of
//     the files it holds: a fresh run needs a new or empty directory, or
//     one of psclip's of its kind that holds no run; a directory of files
//     psclip did not make is a *NotOwnedError, an experiment's run given to
//     anything else an *OwnerError; a start that fails or is refused leaves
//     nothing behind;
//   - a fresh run into a directory that holds a run is refused with an
//     *ExistsError before anything is written; Options.Resume continues the
//     run and Options.Restart deliberately starts it over, both only where
//     psclip made the run;
//   - one process at a time: an advisory lock (LockFile, flock on unix) is
//     taken before anything is written, and a second process is refused at
//     once with a *LockedError naming the holder's PID; the lock dies with
//     its process, so a killed run leaves no stale lock;
//   - one kind of run per directory: the lock file records the directory's
//     kind (Options.Kind: "gpt run", "gpt experiment", …), and a run or
//     experiment of another kind is refused with a *DirKindError;
//   - the ranks of a data-parallel run compare their data, configuration
//     and options (directory, resume, restart, norm logging) before
//     anything is written, so that a refusal leaves nothing behind;
//   - the checkpoint holds, besides the weights and the optimizer state,
//     the run state: the configuration, the identity of the data (Data),
//     the adaptive estimator's state, the trainer's random streams and
//     progress, and the log's length and checksum; a resume refuses other
//     data (*DataChangedError), another configuration, and a log that is
//     missing or does not match the checkpoint (*NotResumableError);
//   - log lines have no length limit.
//
// An experiment's directory (OpenExperiment) holds its results and one run
// directory per run, which belong to it; its record keeps its
// configuration, and a resumed experiment with another is refused
// (*ConfigChangedError); it reads finished runs back, on the same
// configuration and data only (Reuse, Train). The non-writing
// processes of a data-parallel run open their run ReadOnly.
//
// A command's outputs that are no run's go into a fresh place (PrepareDir,
// PrepareFile): a new or empty directory, a new file, or, when asked, over
// earlier outputs (*OverwriteError otherwise), never into a run directory.
//
// A trainer plugs in by describing itself in a Spec (its kind, its
// configuration, data, parameters, optimizer, estimator, random streams and
// progress), creating a Run with New, training with the estimator
// Run.Estimator returns, and handing Run.Train a Trainer: its step, what
// happens after a step (evaluation, logging) and how it rebuilds its curves
// from the log when resumed. docs/architecture.md shows the layer.
//
// The package is public, not internal, because a trainer of one's own, such
// as an image trainer or a data-parallel variant of an existing one, is
// built on it and on nothing else.
package run
