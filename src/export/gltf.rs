//! glTF (stub)
