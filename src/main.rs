fn main() {
    // libgit2 is initialised in `cli::main`, after parsing and before any thread exists, and
    // only for commands that may use git: its OpenSSL start-up costs ~14 ms per process.
    std::process::exit(forgeloop::cli::main());
}
