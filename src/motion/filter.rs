//! Zero-phase low-pass filtering (stub).
