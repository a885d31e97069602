//! Theoretical occupancy.
