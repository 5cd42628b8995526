//! GitHub adapter (design §2, §5.1, §5.2): a small typed REST client over octocrab and token
//! discovery.
//!
//! ```no_run
//! # async fn f() -> Result<(), forgeloop::github::GithubError> {
//! use forgeloop::github::{GithubClient, GithubConfig};
//! let client = GithubClient::new(GithubConfig { token: Some("…".into()), ..GithubConfig::default() })?;
//! let repo = forgeloop::domain::pr_ref::RepoName::parse("acme/widget").expect("valid");
//! let pr = client.pull_request(&repo, 7).await?;
//! println!("{} at {}", pr.head_ref, pr.head_sha);
//! # Ok(()) }
//! ```

mod checks;
mod client;
mod diff;
mod errors;
mod model;
pub mod token;
mod transport;

pub use checks::{CheckRunInfo, JobSteps, Polled};
pub use client::{DEFAULT_API_BASE, DEFAULT_TIMEOUT, GithubClient, GithubConfig, web_base_for, web_host_for};
pub use errors::GithubError;
pub use model::{Access, CheckSummary, Comment, PrState, Published, PullInfo, RepoInfo, User};
pub use token::Token;
