//! What the front ends read of forgeloop's own files, named through the use-case layer (design
//! §2.2: a front end reaches an adapter only through `cycle`): a cycle's paths, its state
//! document and journal, the task-space index, and the one atomic write a front end does (a
//! report copy the person asked for with `--result`).

pub use crate::store::atomic::write_atomic;
pub use crate::store::journal::{Event, read as read_journal};
pub use crate::store::layout::{CyclePaths, expand_tilde};
pub use crate::store::state_file::{StateFileError, load as load_state, read_bytes as read_state_bytes};
pub use crate::store::task_index;
