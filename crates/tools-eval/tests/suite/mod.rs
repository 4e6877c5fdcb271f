mod bridge;
mod cancel;
mod common;
mod javascript;
mod lifecycle;
mod python;
