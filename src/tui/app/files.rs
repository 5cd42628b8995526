//! Keeping the panes in step with the disk: watched changes, discovered and loaded cycles,
//! a cycle's runs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::tui::model::{CycleEntry, RunFile};

use super::{App, Effect, Screens};

impl App {
    pub(super) fn files_changed(&mut self, paths: Vec<PathBuf>, fx: &mut Vec<Effect>) {
        let mut discover = false;
        let mut load = BTreeSet::new();
        let mut journal = false;
        let mut runs = false;
        let mut run_files: Vec<PathBuf> = Vec::new();
        let mut registry = false;
        let mut sources = BTreeSet::new();
        let selected = self.list.selected.clone();
        let watched = Screens::watched(&self.roots);
        let mut screens_changed = Vec::new();
        for path in paths {
            if watched.iter().any(|dir| path.starts_with(dir)) {
                screens_changed.push(path);
                continue;
            }
            if path.starts_with(&self.roots.registry) {
                registry = true;
                if path.file_name().is_some_and(|n| n == "sources.json")
                    && let Ok(rel) = path.strip_prefix(&self.roots.registry)
                {
                    let parts: Vec<_> =
                        rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                    if parts.len() == 3 {
                        sources.insert(format!("{}/{}", parts[0], parts[1]));
                    }
                }
                continue;
            }
            if path.parent() == Some(self.roots.task_spaces_dir.as_path()) || path == self.roots.task_spaces_dir {
                discover = true;
                continue;
            }
            if self.list.contains(&path) {
                load.insert(path);
                continue;
            }
            if let Some((sidecar, state)) = self.list.sidecar_of(&path) {
                let rel = path.strip_prefix(&sidecar).map(Path::to_path_buf).unwrap_or_default();
                if rel.as_os_str().is_empty() || rel.starts_with("events.jsonl") {
                    load.insert(state.clone());
                    journal |= Some(&state) == selected.as_ref();
                }
                if rel.starts_with("runs") || rel.as_os_str().is_empty() {
                    runs |= Some(&state) == selected.as_ref();
                    run_files.push(path.clone());
                }
                continue;
            }
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let in_state_dir = path
                .parent()
                .is_some_and(|p| p == self.roots.cycles_dir || self.roots.extra_dirs.iter().any(|d| d == p));
            if (in_state_dir && crate::cycle::list::is_state_name(&name))
                || path == self.roots.cycles_dir
                || self.roots.extra_dirs.contains(&path)
            {
                discover = true;
            }
        }
        if discover {
            fx.push(Effect::Discover);
        }
        if !load.is_empty() {
            fx.push(Effect::LoadCycles(load.into_iter().collect()));
        }
        if let Some(path) = selected {
            if journal {
                fx.push(Effect::LoadJournal(path.clone()));
            }
            if runs {
                fx.push(Effect::ListRuns(path));
            }
        }
        if !run_files.is_empty() {
            self.with_tabs(fx, |tabs, sel, asked| tabs.run_files_changed(&run_files, sel, asked));
        }
        if registry {
            fx.push(Effect::LoadRegistry);
        }
        for repo in sources {
            fx.push(Effect::LoadSources(repo));
        }
        if !screens_changed.is_empty() {
            let roots = self.roots.clone();
            self.with_screens(fx, |screens, registry, asked| {
                screens.files_changed(&roots, &screens_changed, registry, asked)
            });
        }
    }

    pub(super) fn discovered(&mut self, paths: Vec<PathBuf>, fx: &mut Vec<Effect>) {
        self.discovered = true;
        self.attention.discovered(&paths);
        let known: BTreeSet<&PathBuf> = self.list.cycles.iter().map(|c| &c.path).collect();
        let found: BTreeSet<&PathBuf> = paths.iter().collect();
        let new: Vec<PathBuf> = paths.iter().filter(|p| !known.contains(p)).cloned().collect();
        let gone: Vec<PathBuf> =
            self.list.cycles.iter().filter(|c| !found.contains(&c.path)).map(|c| c.path.clone()).collect();
        if !gone.is_empty() {
            self.cycles_loaded(Vec::new(), gone, fx);
        }
        if !new.is_empty() {
            fx.push(Effect::LoadCycles(new));
        }
        self.dirty = true;
    }

    pub(super) fn cycles_loaded(&mut self, loaded: Vec<CycleEntry>, gone: Vec<PathBuf>, fx: &mut Vec<Effect>) {
        let before = self.list.cycles.len();
        let had_selection = self.list.selected.clone();
        self.attention.loaded(&loaded, fx);
        self.list.merge(loaded, &gone);
        self.reselected(had_selection, fx);
        // A new run may change the diff the tab shows (the last run's).
        self.with_tabs(fx, |tabs, sel, asked| tabs.cycle_reloaded(sel, asked));
        self.size_next(fx);
        // The set of cycles changed: watch their directories (the watcher skips no-ops).
        if self.list.cycles.len() != before || !gone.is_empty() {
            fx.push(Effect::Watch(self.watch_dirs()));
        }
        self.dirty = true;
    }

    pub(super) fn runs_listed(&mut self, path: PathBuf, runs: Vec<RunFile>, fx: &mut Vec<Effect>) {
        if self.list.selected.as_ref() != Some(&path) {
            return;
        }
        let loaded = &mut self.tabs.loaded;
        let before: Vec<PathBuf> =
            loaded.runs.as_ref().map(|(_, r)| r.iter().map(|f| f.path.clone()).collect()).unwrap_or_default();
        let fresh = loaded.runs.is_some() && runs.iter().any(|f| !before.contains(&f.path));
        loaded.runs = Some((path.clone(), runs));
        // A run started here (or one being followed) just created its log: a tab may follow it;
        // a tab that shows runs looks again (the log of the run now listed, its report).
        let running = self.is_running(&path);
        self.with_tabs(fx, |tabs, sel, asked| tabs.runs_listed(fresh, running, sel, asked));
        self.dirty = true;
    }
}
