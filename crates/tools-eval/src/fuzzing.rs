//! The entry point for the fuzz targets of the repository's `fuzz/` folder, built only with
//! the `testing` feature; not part of the API. They run the host's own handling of what a kernel driver sends, without a kernel.

use crate::EvalConfig;
use crate::cell::CellRun;
use crate::kernel::channel::decode_message;

/// Decodes each of `bodies` as the host decodes one framed message from a kernel, folds
/// every message that decodes into one cell's result as a running cell does, and returns
/// the cell's output text. A message that does not decode is an error the host reports
/// (counted in the second value), never a panic.
pub fn take_in_kernel_messages<'a>(bodies: impl IntoIterator<Item = &'a [u8]>) -> (String, usize) {
    let mut bad = 0;
    let Ok(settings) = EvalConfig::default().cell_settings() else {
        return (String::new(), 0);
    };
    let mut cell = CellRun::new(&settings);
    for body in bodies {
        match decode_message(body) {
            Ok(msg) => cell.absorb(msg),
            Err(_) => bad += 1,
        }
    }
    (cell.output_text(), bad)
}
