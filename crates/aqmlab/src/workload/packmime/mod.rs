//! PackMime-HTTP as implemented in ns-2.35 [model-facts §8.3 and Appendix A]. Each generator
//! owns its state and its own `Rng`; `rate` is new TCP connections per second.

pub mod arrivals;
pub mod persistent;
pub mod request;
pub mod response;
pub mod server_delay;
pub mod tables;
pub mod xmit;

pub use arrivals::PackMimeArrivals;
pub use persistent::{Exchange, PackMimePersistence};
pub use request::PackMimeRequestSize;
pub use response::PackMimeResponseSize;
pub use server_delay::PackMimeServerDelay;
pub use xmit::{PackMimeXmit, XmitSide};
