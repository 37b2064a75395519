//! The protocol core against a scripted kernel: every path a real kernel
//! takes, and the faults it can only rarely be made to show.

mod apply;
mod call;
mod items;
mod kernel;
mod property;
mod stopped;
mod unanswered;
