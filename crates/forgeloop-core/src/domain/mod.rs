//! The pure core: no I/O, no clock, no network. Everything here is decided from its
//! arguments, so it is tested exhaustively with plain unit tests.

pub mod address;
pub mod brief;
pub mod checks;
pub mod client_document;
pub mod commands;
pub mod connector;
pub mod diff;
pub mod egress;
pub mod environment;
pub mod event;
pub mod event_data;
pub mod form;
pub mod hash;
pub mod integrity;
pub mod lockfiles;
pub mod machine;
pub mod needs_network;
pub mod next;
pub mod pr_ref;
pub mod protect;
pub mod reply;
pub mod repo_path;
pub mod report;
pub mod secret_names;
pub mod state;
pub mod status;
pub mod stop;
pub mod task_space;
pub mod terminal;
pub mod test_deps;
pub mod test_files;
pub mod text;
pub mod validation;
pub mod word;
