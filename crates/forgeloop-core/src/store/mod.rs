//! File adapters: atomic writes, locks, the journal, the task-space index, the layout of a
//! forgeloop home and keeping it private.

pub mod atomic;
pub mod connector;
pub mod holder;
pub mod journal;
pub mod layout;
pub mod lock;
pub mod nofollow;
pub mod private;
pub mod state_file;
pub mod task_index;
pub mod tighten;
pub mod tree;
