//! Declarative bulk sync: desired table in, kernel converged out.
