//! Use cases: one function per thing a person or agent can do to a cycle. The CLI, the
//! control room, the MCP server and the demo all call these and nothing else mutates state.

pub mod actions;
pub mod allow_network;
pub mod attach;
mod baseline;
mod cache_layers;
pub mod ci_wait;
pub mod commands;
pub mod connector;
pub mod context;
pub mod correct_commands;
pub mod diff;
pub mod doctor;
pub mod files;
pub mod gc;
pub mod handoff;
pub mod home;
pub mod integrity;
pub mod list;
pub mod live;
pub mod log;
pub mod next;
pub mod outbox;
pub mod pr_status;
pub mod pr_test;
pub mod projects;
pub mod reply;
pub mod review;
mod sandboxed_run;
pub mod say;
pub mod session;
pub mod show;
pub mod start;
pub mod stop;
pub mod wait;

pub use ci_wait::ChecksError;
pub use context::{Clock, Ctx, FixedClock, SystemClock};
