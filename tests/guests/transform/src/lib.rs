//! Test-only transform skill component (being written).
