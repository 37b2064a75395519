//! The protocol core against the emulated kernel (`crate::emulator`): real
//! requests with the kernel's verdicts, every path a real kernel takes,
//! and the faults it can only rarely be made to show, injected at its
//! socket.

mod apply;
mod call;
mod driver;
mod items;
mod property;
mod stopped;
mod unanswered;
