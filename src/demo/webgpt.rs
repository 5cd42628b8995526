//! The scripted stand-in for WebGPT. It reads the message the coordinator "typed into the
//! chat" and answers as WebGPT would: the prompt makes it open a pull request on the emulator,
//! a failure handoff makes it push a commit to that PR's branch, the follow-up makes it give
//! the link it left out. What it writes comes from its [`Persona`], so each cycle of the demo
//! ends where its scenario says.

use std::sync::Arc;

use github_emulator::{Emulator, EmulatorError, RepoHandle};

use crate::domain::text::{COMMENT_HEADING, PR_URL_PLACEHOLDER};

/// One commit WebGPT makes: (path, contents) pairs.
pub type Attempt = Vec<(String, String)>;

/// What this WebGPT conversation will do.
#[derive(Debug, Clone)]
pub struct Persona {
    /// The branch its PR comes from.
    pub branch: String,
    /// The PR's title.
    pub title: String,
    /// What it says it did, in its first reply.
    pub summary: String,
    /// The PR's first commit, then one commit per failure handoff (the last one repeats).
    pub attempts: Vec<Attempt>,
    /// Leaves the PR link out of its first reply (it is asked once, then gives it).
    pub forgets_link_once: bool,
}

/// One scripted conversation: its persona and what it has done so far.
pub struct WebGpt {
    emulator: Arc<Emulator>,
    repo: RepoHandle,
    persona: Persona,
    pr: Option<u64>,
    commits: usize,
}

/// What the message asked for, recognised by its content as a person would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message {
    /// The first message: the implementation request and the confirmed question.
    Prompt,
    /// A failure handoff: the test report's comment.
    Handoff,
    /// The follow-up asking for the PR's link.
    FollowUp,
    /// Anything else: answered with a question and the PR link, if there is one.
    Unknown,
}

/// Which kind of message `message` is, from its content.
pub fn recognise(message: &str) -> Message {
    if message.contains("## Implementation request") && message.contains("## Confirmed WebGPT question") {
        Message::Prompt
    } else if message.contains(COMMENT_HEADING) {
        Message::Handoff
    } else if message.contains(PR_URL_PLACEHOLDER) || message.contains("PR_URL:") {
        Message::FollowUp
    } else {
        Message::Unknown
    }
}

impl WebGpt {
    /// A conversation that has not started yet.
    pub fn new(emulator: Arc<Emulator>, repo: RepoHandle, persona: Persona) -> WebGpt {
        WebGpt { emulator, repo, persona, pr: None, commits: 0 }
    }

    /// The PR this conversation opened, as WebGPT links it.
    pub fn pr_url(&self) -> Option<String> {
        self.pr.map(|n| format!("{}/pull/{n}", self.repo.html_url))
    }

    /// WebGPT's finished reply to `message`.
    pub async fn answer(&mut self, message: &str) -> Result<String, EmulatorError> {
        match recognise(message) {
            Message::Prompt if self.pr.is_none() => self.open_pr().await,
            Message::Prompt => Ok(self.with_link("I already opened a pull request for this task.")),
            Message::Handoff => self.push_fix(message).await,
            Message::FollowUp => Ok(self.with_link("Sorry, I left the link out. Here is the pull request.")),
            Message::Unknown => Ok(format!(
                "I am not sure what you are asking for.\n\nPR_URL: {}",
                self.pr_url().unwrap_or_else(|| "NOT_CREATED".into())
            )),
        }
    }

    /// Opens the PR with the persona's first attempt (what the prompt asks for); returns the
    /// reply WebGPT gives.
    pub async fn open_pr(&mut self) -> Result<String, EmulatorError> {
        let sha = self.commit(&self.persona.title.clone()).await?;
        let number = self
            .emulator
            .open_pr(&self.repo, &self.persona.branch, &self.repo.default_branch, &self.persona.title)
            .await?;
        self.pr = Some(number);
        let text = format!(
            "{}\n\nI opened a pull request from `{}` (head commit {}).",
            self.persona.summary,
            self.persona.branch,
            &sha[..12.min(sha.len())]
        );
        if self.persona.forgets_link_once {
            // As WebGPT sometimes does: the work is done, the link is missing.
            return Ok(text);
        }
        Ok(self.with_link(&text))
    }

    /// Pushes the next attempt to the PR's branch after reading `handoff`; returns the reply.
    pub async fn push_fix(&mut self, handoff: &str) -> Result<String, EmulatorError> {
        if self.pr.is_none() {
            return Ok("I have no pull request for this task yet.\n\nPR_URL: NOT_CREATED".into());
        }
        // It reads the failure it was sent and says what it fixed.
        let failure = handoff
            .lines()
            .map(str::trim)
            .find(|line| line.starts_with("FAIL "))
            .map(|line| format!("The test run reported `{line}`. "))
            .unwrap_or_default();
        let sha = self.commit(&format!("Fix: {}", self.persona.title)).await?;
        Ok(self.with_link(&format!(
            "{failure}I pushed a fix to the same branch `{}` (head commit {}).",
            self.persona.branch,
            &sha[..12.min(sha.len())]
        )))
    }

    /// Commits the next attempt onto the PR branch (an open PR follows its branch).
    async fn commit(&mut self, message: &str) -> Result<String, EmulatorError> {
        let index = self.commits.min(self.persona.attempts.len().saturating_sub(1));
        let files: Vec<(&str, &str)> = self
            .persona
            .attempts
            .get(index)
            .map(|files| files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect())
            .unwrap_or_default();
        if files.is_empty() {
            return Err(EmulatorError::Invalid(format!(
                "the demo persona for {} has no commit to make",
                self.persona.branch
            )));
        }
        let sha = self.emulator.commit_files(&self.repo, &self.persona.branch, &files, message).await?;
        self.commits += 1;
        Ok(sha)
    }

    fn with_link(&self, text: &str) -> String {
        match self.pr_url() {
            Some(url) => format!("{text}\n\nPR_URL: {url}"),
            None => format!("{text}\n\nPR_URL: NOT_CREATED"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::text;

    #[test]
    fn it_recognises_what_forgeloop_sends() {
        let prompt = text::prompt(&text::PromptInput {
            question: "q",
            intent_brief: "b",
            request: "r",
            new_repository: None,
            continue_pr: None,
            protected_paths: &[],
        });
        assert_eq!(recognise(&prompt), Message::Prompt);
        assert_eq!(
            recognise(&text::handoff(
                "## Forge Loop PR test: TEST_FAILED\n\nFAIL x",
                crate::domain::report::TestStatus::Failed
            )),
            Message::Handoff
        );
        assert_eq!(recognise(&text::followup()), Message::FollowUp);
        assert_eq!(recognise("hello"), Message::Unknown);
    }
}
