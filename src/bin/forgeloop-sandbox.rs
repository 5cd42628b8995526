//! `forgeloop-sandbox`: the sandbox helper alone (design §5.6), installed beside `forgeloop`.
//! The runner starts one per test command; linking only the helper makes it a small program
//! that starts in a fraction of the time the whole `forgeloop` takes to load (its relocations
//! alone cost ~400 page faults per command). `forgeloop __sandbox-exec` does the same, and is
//! used when this binary is missing.

fn main() {
    #[cfg(target_os = "linux")]
    std::process::exit(forgeloop::sandbox::helper::main());
    #[cfg(not(target_os = "linux"))]
    {
        eprintln!("forgeloop-sandbox: the sandbox needs Linux");
        std::process::exit(125);
    }
}
