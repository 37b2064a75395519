//! The kernel tests' harness of the operation suite: each body run on both
//! clients, each in a fresh network namespace of the VM's kernel (the
//! emulated harness of the same bodies: tests/emulated/main.rs).

/// Defines, for the async suite function `$body(&mut impl Ops)`, a module
/// `$body` with two kernel tests: `blocking` (the blocking client) and
/// `tokio` (the async one), each in a fresh network namespace.
#[macro_export]
macro_rules! both {
    ($($body:ident),* $(,)?) => {$(
        mod $body {
            #[test]
            #[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
            fn blocking() {
                $crate::common::fresh_netns();
                let mut c = ipvsnl::Client::new().expect("blocking client");
                $crate::common::ops::runtime().block_on(super::$body(&mut c));
            }

            #[test]
            #[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
            fn tokio() {
                $crate::common::fresh_netns();
                $crate::common::ops::runtime().block_on(async {
                    let mut c = ipvsnl::AsyncClient::new().expect("async client");
                    super::$body(&mut c).await
                });
            }
        }
    )*};
}
