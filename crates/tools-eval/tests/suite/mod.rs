mod bridge;
mod common;
mod javascript;
mod lifecycle;
mod python;
