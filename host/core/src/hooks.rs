//! Lifecycle hooks: subscriptions and dispatch in priority order (being written).
