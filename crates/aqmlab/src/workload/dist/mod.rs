//! Random-variable building blocks shared by the traffic models.

pub mod empirical;
pub mod fft;
pub mod fsd;
pub mod piecewise;
pub mod residual;
pub mod special;
pub mod variates;

#[cfg(test)]
pub(crate) mod ks;

pub use empirical::{EmpiricalCdf, ParseError};
pub use fsd::Fsd;
pub use piecewise::PiecewiseLaw;
pub use residual::ResidualLaw;
