//! The `forgeloop` binary: the sandbox helper when started as one, else the command line
//! (`forgeloop::cli::main`, design §5).

fn main() {
    // The sandbox helper (design §5.6) runs before anything else: single-threaded, no parsing of
    // the user's command line, nothing initialised.
    #[cfg(target_os = "linux")]
    {
        let args: Vec<String> = std::env::args().skip(1).collect();
        if args.first().map(String::as_str) == Some(forgeloop::sandbox::HELPER_ARG) {
            std::process::exit(forgeloop::sandbox::helper::main());
        }
    }
    // libgit2 is initialised in `cli::main`, after parsing and before any thread exists, and
    // only for commands that may use git: its OpenSSL start-up costs ~14 ms per process.
    std::process::exit(forgeloop::cli::main());
}
