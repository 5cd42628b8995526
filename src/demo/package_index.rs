//! A package index on 127.0.0.1 for the demo and the tests: PyPI's "simple" layout (PEP 503)
//! serving wheels built here, so a project's `setup` can `pip install` a dependency through the
//! run's egress proxy without the internet; and git repositories over git's "dumb" HTTP
//! protocol (static files), so a setup with nothing but `git` can `git clone` one (the demo
//! needs only `sh` and `git`). It stands in for a registry the person allows
//! (`[network] allow = ["127.0.0.1:PORT"]`); nothing in the product uses it.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// One package: a pure-Python wheel whose module is `files`.
pub struct Package {
    /// The package's name, as `pip install NAME` asks for it.
    pub name: String,
    /// Its version.
    pub version: String,
    /// `(path inside the wheel, contents)`, e.g. `("tinydep/__init__.py", "VALUE = 42\n")`.
    pub files: Vec<(String, String)>,
}

/// A dependency served as a git repository: `git clone http://ADDR/git/NAME.git`.
pub struct GitPackage {
    /// The repository's name (`NAME` in its URL).
    pub name: String,
    /// `(path in the repository, contents)`.
    pub files: Vec<(String, String)>,
}

/// A file served as-is at `/blobs/NAME` (a large download for the proxy's benchmark).
pub struct Blob {
    /// The file's name in its URL.
    pub name: String,
    /// Its contents.
    pub bytes: Vec<u8>,
}

/// A running index; stops when dropped.
pub struct PackageIndex {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    served: Arc<AtomicU64>,
}

impl PackageIndex {
    /// Serves `packages` on 127.0.0.1 (a free port) from a thread of its own.
    pub fn start(packages: &[Package]) -> std::io::Result<PackageIndex> {
        PackageIndex::start_with(packages, &[])
    }

    /// [`PackageIndex::start`], also serving `git` repositories (built here with the `git` CLI).
    pub fn start_with(packages: &[Package], git: &[GitPackage]) -> std::io::Result<PackageIndex> {
        PackageIndex::start_serving(packages, git, &[])
    }

    /// [`PackageIndex::start_with`], also serving `blobs`.
    pub fn start_serving(packages: &[Package], git: &[GitPackage], blobs: &[Blob]) -> std::io::Result<PackageIndex> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        let mut root = String::from("<!DOCTYPE html><html><body>\n");
        for package in packages {
            let name = package.name.to_ascii_lowercase().replace('_', "-");
            let wheel_name = format!("{}-{}-py3-none-any.whl", package.name.replace('-', "_"), package.version);
            let wheel = wheel(package)?;
            root.push_str(&format!("<a href=\"/simple/{name}/\">{name}</a>\n"));
            let page = format!(
                "<!DOCTYPE html><html><body>\n<a href=\"/files/{wheel_name}\">{wheel_name}</a>\n</body></html>\n"
            );
            files.push((format!("/simple/{name}/"), page.into_bytes()));
            files.push((format!("/files/{wheel_name}"), wheel));
        }
        root.push_str("</body></html>\n");
        files.push(("/simple/".into(), root.into_bytes()));
        for package in git {
            files.extend(git_files(package)?);
        }
        files.extend(blobs.iter().map(|blob| (format!("/blobs/{}", blob.name), blob.bytes.clone())));
        let stop = Arc::new(AtomicBool::new(false));
        let served = Arc::new(AtomicU64::new(0));
        let (thread_stop, thread_served) = (stop.clone(), served.clone());
        std::thread::Builder::new().name("package-index".into()).spawn(move || {
            while !thread_stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        if serve(stream, &files) {
                            thread_served.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                    Err(_) => break,
                }
            }
        })?;
        Ok(PackageIndex { addr, stop, served })
    }

    /// The address it listens on (127.0.0.1 and a free port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/simple/`, for pip's `--index-url`.
    pub fn url(&self) -> String {
        format!("http://{}/simple/", self.addr)
    }

    /// `http://127.0.0.1:PORT/git/NAME.git`, for `git clone`.
    pub fn git_url(&self, name: &str) -> String {
        format!("http://{}/git/{name}.git", self.addr)
    }

    /// `http://127.0.0.1:PORT/blobs/NAME`.
    pub fn blob_url(&self, name: &str) -> String {
        format!("http://{}/blobs/{name}", self.addr)
    }

    /// Requests answered with a file (not 404s).
    pub fn served(&self) -> u64 {
        self.served.load(Ordering::Relaxed)
    }
}

impl Drop for PackageIndex {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Answers one request; true when it served a file.
fn serve(stream: TcpStream, files: &[(String, Vec<u8>)]) -> bool {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(10)));
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return false;
    }
    // Skip the headers; a proxy sends the path in origin form.
    let mut header = String::new();
    while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
        header.clear();
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split('?').next().unwrap_or(path);
    let found = files.iter().find(|(p, _)| p == path || p.trim_end_matches('/') == path);
    let mut out = &stream;
    match found {
        Some((p, body)) => {
            let kind = if p.starts_with("/simple/") { "text/html" } else { "application/octet-stream" };
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let ok = out.write_all(head.as_bytes()).and_then(|()| out.write_all(body)).is_ok();
            let _ = out.flush();
            ok
        }
        None => {
            let _ = out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            false
        }
    }
}

/// The files of `package` as a bare repository served over dumb HTTP (one pack, plus the
/// `info/refs` and `objects/info/packs` that `git update-server-info` writes), keyed by URL path.
fn git_files(package: &GitPackage) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let dir = tempfile::tempdir()?;
    let work = dir.path().join("work");
    let bare = dir.path().join("bare");
    for (path, text) in &package.files {
        let path = work.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
    }
    let git = |args: &[&str]| -> std::io::Result<()> {
        // The person's git configuration (signing, hooks, templates) stays out of it.
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=forgeloop-demo", "-c", "user.email=demo@forgeloop.invalid"])
            .args(["-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"])
            // No background maintenance: git ≥ 2.46 detaches it after a commit, and the
            // detached process would outlive the index's setup.
            .args(["-c", "maintenance.auto=false", "-c", "gc.auto=0"])
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdin(std::process::Stdio::null())
            .output()?;
        if out.status.success() {
            Ok(())
        } else {
            Err(std::io::Error::other(format!("git {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr))))
        }
    };
    let (work_s, bare_s) = (work.to_string_lossy().into_owned(), bare.to_string_lossy().into_owned());
    git(&["init", "-q", &work_s])?;
    git(&["-C", &work_s, "add", "-A"])?;
    git(&["-C", &work_s, "commit", "-q", "-m", &package.name])?;
    git(&["clone", "-q", "--bare", &work_s, &bare_s])?;
    git(&["-C", &bare_s, "repack", "-a", "-d", "-q"])?;
    git(&["-C", &bare_s, "update-server-info"])?;
    let mut files = Vec::new();
    collect(&bare, &bare, &format!("/git/{}.git", package.name), &mut files)?;
    Ok(files)
}

fn collect(
    root: &std::path::Path,
    dir: &std::path::Path,
    prefix: &str,
    out: &mut Vec<(String, Vec<u8>)>,
) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            collect(root, &path, prefix, out)?;
        } else if let Ok(rel) = path.strip_prefix(root) {
            out.push((format!("{prefix}/{}", rel.to_string_lossy()), std::fs::read(&path)?));
        }
    }
    Ok(())
}

/// A minimal valid wheel (a zip): the package's files, `METADATA`, `WHEEL` and `RECORD`, stored
/// without compression.
fn wheel(package: &Package) -> std::io::Result<Vec<u8>> {
    let dist = format!("{}-{}.dist-info", package.name.replace('-', "_"), package.version);
    let mut entries: Vec<(String, Vec<u8>)> =
        package.files.iter().map(|(p, c)| (p.clone(), c.clone().into_bytes())).collect();
    entries.push((
        format!("{dist}/METADATA"),
        format!("Metadata-Version: 2.1\nName: {}\nVersion: {}\n", package.name, package.version).into_bytes(),
    ));
    entries.push((
        format!("{dist}/WHEEL"),
        b"Wheel-Version: 1.0\nGenerator: forgeloop-demo\nRoot-Is-Purelib: true\nTag: py3-none-any\n".to_vec(),
    ));
    let mut record: String = entries.iter().map(|(p, _)| format!("{p},,\n")).collect();
    record.push_str(&format!("{dist}/RECORD,,\n"));
    entries.push((format!("{dist}/RECORD"), record.into_bytes()));
    Ok(zip_stored(&entries))
}

/// A zip archive of `entries`, stored (no compression), as `unzip` and Python's zipfile read it.
fn zip_stored(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in entries {
        let crc = crc32(data);
        let offset = out.len() as u32;
        let le16 = |v: u16| v.to_le_bytes();
        let le32 = |v: u32| v.to_le_bytes();
        let (size, name_len) = (data.len() as u32, name.len() as u16);
        out.extend_from_slice(&le32(0x0403_4b50));
        for v in [20u16, 0, 0, 0, 0x21] {
            out.extend_from_slice(&le16(v));
        }
        for v in [crc, size, size] {
            out.extend_from_slice(&le32(v));
        }
        out.extend_from_slice(&le16(name_len));
        out.extend_from_slice(&le16(0));
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        central.extend_from_slice(&le32(0x0201_4b50));
        for v in [20u16, 20, 0, 0, 0, 0x21] {
            central.extend_from_slice(&le16(v));
        }
        for v in [crc, size, size] {
            central.extend_from_slice(&le32(v));
        }
        for v in [name_len, 0, 0, 0, 0] {
            central.extend_from_slice(&le16(v));
        }
        central.extend_from_slice(&le32(0));
        central.extend_from_slice(&le32(offset));
        central.extend_from_slice(name.as_bytes());
    }
    let (start, length) = (out.len() as u32, central.len() as u32);
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    for v in [0u16, 0, entries.len() as u16, entries.len() as u16] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&length.to_le_bytes());
    out.extend_from_slice(&start.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for byte in data {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn the_index_serves_its_simple_pages_and_wheels_and_python_reads_the_wheel() {
        let index = PackageIndex::start(&[Package {
            name: "tinydep".into(),
            version: "1.0".into(),
            files: vec![("tinydep/__init__.py".into(), "VALUE = 42\n".into())],
        }])
        .unwrap();
        let get = |path: &str| {
            let mut stream = TcpStream::connect(index.addr()).unwrap();
            write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
            let mut body = Vec::new();
            stream.read_to_end(&mut body).unwrap();
            body
        };
        let page = String::from_utf8(get("/simple/tinydep/")).unwrap();
        assert!(page.contains("200 OK") && page.contains("tinydep-1.0-py3-none-any.whl"), "{page}");
        let wheel = get("/files/tinydep-1.0-py3-none-any.whl");
        let body = &wheel[wheel.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4..];
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.whl"), body).unwrap();
        let out = std::process::Command::new("python3")
            .args(["-c", "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; print(z.read('tinydep/__init__.py').decode(), end='')"])
            .arg(dir.path().join("t.whl"))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "VALUE = 42\n", "{out:?}");
        assert!(String::from_utf8(get("/missing")).unwrap().starts_with("HTTP/1.1 404"));
        assert_eq!(index.served(), 2);
    }

    #[test]
    fn a_blob_is_served_whole_at_its_url() {
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let index =
            PackageIndex::start_serving(&[], &[], &[Blob { name: "big.bin".into(), bytes: bytes.clone() }]).unwrap();
        assert!(index.blob_url("big.bin").ends_with("/blobs/big.bin"));
        let mut stream = TcpStream::connect(index.addr()).unwrap();
        write!(stream, "GET /blobs/big.bin HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut got = Vec::new();
        stream.read_to_end(&mut got).unwrap();
        let body = &got[got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4..];
        assert_eq!(body, &bytes[..]);
    }

    #[test]
    fn git_clones_a_git_package_from_the_index() {
        let index = PackageIndex::start_with(
            &[],
            &[GitPackage { name: "checklib".into(), files: vec![("lib.sh".into(), "echo from checklib\n".into())] }],
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("git")
            .args(["clone", "-q", &index.git_url("checklib")])
            .arg(dir.path().join("checklib"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(std::fs::read_to_string(dir.path().join("checklib/lib.sh")).unwrap(), "echo from checklib\n");
    }
}
