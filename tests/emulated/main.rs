//! The operation suite of the kernel tests (`tests/kernel_api/operations.rs`:
//! the same bodies, not a copy) run on both clients against the emulated
//! kernel (`ipvsnl::emulator`), on the host, without root: where the kernel
//! tests give each body a fresh network namespace of the VM's kernel, this
//! harness gives it a fresh emulated kernel. `<body>::blocking` and
//! `<body>::tokio`, as in the VM.

#![allow(async_fn_in_trait)]

/// What the suite's bodies take from the kernel tests' support: the
/// clients' common trait and the runtime (the kernel harness, `both!`
/// there, is replaced by the one below).
mod common {
    pub(crate) use super::ops;
}
#[path = "../common/ops.rs"]
mod ops;

/// Defines, for the async suite function `$body(&mut impl Ops)`, a module
/// `$body` with two host tests: `blocking` and `tokio`, each with a kernel
/// of its own.
#[macro_export]
macro_rules! both {
    ($($body:ident),* $(,)?) => {$(
        mod $body {
            #[test]
            fn blocking() {
                let kernel = ipvsnl::emulator::Kernel::new();
                let mut c = ipvsnl::Client::emulated(&kernel);
                $crate::common::ops::runtime().block_on(super::$body(&mut c));
            }

            #[test]
            fn tokio() {
                let kernel = ipvsnl::emulator::Kernel::new();
                $crate::common::ops::runtime().block_on(async {
                    let mut c = ipvsnl::AsyncClient::emulated(&kernel);
                    super::$body(&mut c).await
                });
            }
        }
    )*};
}

#[path = "../kernel_api/operations.rs"]
mod operations;
