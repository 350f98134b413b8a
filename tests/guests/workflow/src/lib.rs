//! Test-only workflow skill component (being written).
