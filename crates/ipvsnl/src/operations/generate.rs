//! The macro that turns the table of operations ([`super`]) into the
//! methods of both clients and the [`Operations`](super::Operations)
//! trait. Each entry of the table reads
//!
//! ```text
//! /// docs, #[must_use = "..."] and other attributes
//! fn name[V: Bound, ...](self: &mut Self, arg: Type, ...) -> Output = future;
//! ```
//!
//! where `future` is an expression (of `self` and the arguments) whose
//! future does the work over the client's [`ClientCore`](crate::client_core::ClientCore),
//! whichever its transport; `[V: Bound, ...]` names the type parameters an
//! operation may take (closures: a visitor, an order; each bound a path
//! such as `FnMut(&ServiceEntry) -> ControlFlow<()>`), and the receiver is written
//! `self: &Self` or `self: &mut Self` (a macro cannot tell `&self` from
//! `&mut self` by pattern without ambiguity). From it come:
//!
//! - `Client::name`: `block_on(future)`, the future run on the calling
//!   thread (every system call of the blocking transport happens as it is
//!   polled, so it is ready at its first poll);
//! - `AsyncClient::name` (feature `tokio`): `async fn`, `future.await`;
//! - `Operations::name`, returning `impl Future<Output = Output> + Send`
//!   (the visitor also `Send`, so the async client's future is), and its
//!   two implementations: the async method's future, and for the blocking
//!   client a future already complete, made by calling the method.
//!
//! The attributes (docs, `#[must_use]`) go on both methods and on the
//! trait's, so the three read the same.

/// Generates the clients' methods and the trait from the table; see the
/// module doc.
macro_rules! client_ops {
    (
        $(#[$trait_attr:meta])*
        pub trait $trait:ident;
        $(
        $(#[$attr:meta])*
        fn $name:ident $([$($g:ident : $bound:path),+ $(,)?])?
            ($s:ident : $recv:ty $(, $arg:ident : $ty:ty)* $(,)?) -> $out:ty
            = $work:expr;
    )*) => {
        impl crate::Client {
            $(
                $(#[$attr])*
                pub fn $name $(<$($g: $bound),+>)? ($s: $recv $(, $arg: $ty)*) -> $out {
                    crate::block_on::block_on($work)
                }
            )*
        }

        #[cfg(feature = "tokio")]
        #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
        impl crate::AsyncClient {
            $(
                $(#[$attr])*
                pub async fn $name $(<$($g: $bound),+>)? ($s: $recv $(, $arg: $ty)*) -> $out {
                    $work.await
                }
            )*
        }

        $(#[$trait_attr])*
        pub trait $trait: sealed::Sealed {
            $(
                $(#[$attr])*
                fn $name $(<$($g: $bound + Send),+>)? ($s: $recv $(, $arg: $ty)*)
                    -> impl std::future::Future<Output = $out> + Send;
            )*
        }

        impl $trait for crate::Client {
            $(
                fn $name $(<$($g: $bound + Send),+>)? ($s: $recv $(, $arg: $ty)*)
                    -> impl std::future::Future<Output = $out> + Send
                {
                    std::future::ready(crate::Client::$name($s $(, $arg)*))
                }
            )*
        }

        #[cfg(feature = "tokio")]
        #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
        impl $trait for crate::AsyncClient {
            $(
                fn $name $(<$($g: $bound + Send),+>)? ($s: $recv $(, $arg: $ty)*)
                    -> impl std::future::Future<Output = $out> + Send
                {
                    crate::AsyncClient::$name($s $(, $arg)*)
                }
            )*
        }
    };
}
