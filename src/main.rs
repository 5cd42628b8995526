fn main() {
    // Before any thread exists: libgit2's first initialisation may set SSL_CERT_* variables.
    forgeloop::checkout::init_git_early();
    std::process::exit(forgeloop::cli::main());
}
