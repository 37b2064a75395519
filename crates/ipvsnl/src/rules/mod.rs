//! The ipvsadm rules format (`ipvsadm -S` output, `ipvsadm -R` input):
//! parse and print.
