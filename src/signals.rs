//! The process's stop signals as a future, for every front end that runs something long
//! (a test run from the CLI, the demo): Ctrl-C or SIGTERM both mean "stop cleanly".

/// Resolves on the first Ctrl-C or SIGTERM.
pub async fn interrupted() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}
