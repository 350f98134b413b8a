//! Test-only hooks skill component (being written).
