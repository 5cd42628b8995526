fn main() {
    std::process::exit(forgeloop::cli::main());
}
