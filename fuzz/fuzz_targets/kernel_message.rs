//! What a kernel driver sends the host (framed JSON: output, displays, values, errors,
//! bridged tool calls, the end of a cell): any bytes are read frame by frame, decoded or
//! reported as a bad message, and folded into a cell's answer without a panic; the output
//! kept stays bounded whatever the kernel claims.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// More than the answer budget keeps: output past it must have been cut.
const OUTPUT_BOUND: usize = 64 * 1024;

fuzz_target!(|data: &[u8]| {
    let mut r = std::io::BufReader::new(data);
    let mut bodies = Vec::new();
    for _ in 0..64 {
        match tools_core::framing::read_frame(&mut r) {
            Ok(Some(body)) => bodies.push(body),
            Ok(None) | Err(_) => break,
        }
    }
    let (output, bad) = tools_eval::take_in_kernel_messages(bodies.iter().map(Vec::as_slice));
    assert!(bad <= bodies.len());
    assert!(
        output.len() <= OUTPUT_BOUND,
        "the kept output grew to {} bytes",
        output.len()
    );
});
