//! Test-only prompt skill component (being written).
