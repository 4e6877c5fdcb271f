//! The entry point for the fuzz targets of the repository's `fuzz/` folder, built only with
//! the `testing` feature; not part of the API. It lets a target send any arguments through
//! the real request path (registry lookup, guard chain, the tool's own call and its
//! [`crate::parse_args`]) while no call goes further than parsing: arguments that parse
//! end the call with [`ARGUMENTS_PARSED`], so nothing is written, started or asked.

tokio::task_local! {
    static STOP_AFTER_PARSING: ();
}

/// The internal-error message a call answers with when its arguments parsed inside
/// [`stop_after_parsing`].
pub const ARGUMENTS_PARSED: &str = "the arguments parsed; the call stopped there (fuzzing)";

/// Runs `fut` (calls through a registry) with every [`crate::parse_args`] inside it ending
/// its call once the arguments parse.
pub async fn stop_after_parsing<F: std::future::Future>(fut: F) -> F::Output {
    STOP_AFTER_PARSING.scope((), fut).await
}

/// Whether the current call runs inside [`stop_after_parsing`].
pub(crate) fn stopping_after_parsing() -> bool {
    STOP_AFTER_PARSING.try_with(|_| ()).is_ok()
}
