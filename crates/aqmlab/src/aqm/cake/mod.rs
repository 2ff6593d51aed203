//! CAKE (Common Applications Kept Enhanced; Høiland-Jørgensen, Täht and Morton, "Piece of
//! CAKE: A Comprehensive Queue Management Solution for Home Gateways", IEEE LANMAN 2018,
//! arXiv 1804.07617; Linux `net/sched/sch_cake.c`).

pub mod cobalt;
pub mod flow;
pub mod hash;
pub mod shaper;
pub mod tins;
