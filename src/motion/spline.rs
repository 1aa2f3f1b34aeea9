//! C² cubic splines with analytic derivatives (stub).
