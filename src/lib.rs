//! Test and example support for the ipvsnl workspace (not published).
