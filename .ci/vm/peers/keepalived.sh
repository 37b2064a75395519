#!/bin/sh
# In the VM (IPVSNL_VM_PEERS=1; run by scripts/measure/peers): keepalived -C (checkers only)
# with one NAT virtual server of two busybox httpd real servers, TCP_CHECK
# every 1 s (connect_timeout 1). Prints, with deadlines of 10 s (polled every
# 50 ms in ipvsadm -Ln): the service's appearance, three rounds of a real
# server killed -> removed (no inhibit_on_failure) and restarted -> added,
# the table after SIGTERM, and after SIGTERM with -I. Exit status 1 when a
# deadline passed.
fail=0
up() { cut -d' ' -f1 /proc/uptime; }
ip addr add 10.9.0.2/32 dev lo; ip addr add 10.9.0.3/32 dev lo; ip addr add 10.9.9.9/32 dev lo
mkdir -p /tmp/ka /tmp/www; echo hi > /tmp/www/index.html
busybox httpd -f -p 10.9.0.2:8080 -h /tmp/www & A=$!
busybox httpd -f -p 10.9.0.3:8080 -h /tmp/www & B=$!
cat > /tmp/ka/k.conf <<'C'
global_defs { router_id peers }
virtual_server 10.9.9.9 80 {
  delay_loop 1
  lb_algo rr
  lb_kind NAT
  protocol TCP
  real_server 10.9.0.2 8080 { weight 1
    TCP_CHECK { connect_timeout 1 } }
  real_server 10.9.0.3 8080 { weight 1
    TCP_CHECK { connect_timeout 1 } }
}
C
t0=$(up)
keepalived -n -l -D -C -f /tmp/ka/k.conf -p /tmp/ka/k.pid -c /tmp/ka/c.pid > /tmp/ka/log 2>&1 & K=$!
waitfor() { i=0; while [ $i -lt 200 ]; do if ipvsadm -Ln | grep -q "$1"; then return 0; fi; sleep 0.05; i=$((i+1)); done; return 1; }
waitnot() { i=0; while [ $i -lt 200 ]; do if ! ipvsadm -Ln | grep -q "$1"; then return 0; fi; sleep 0.05; i=$((i+1)); done; return 1; }
waitfor "10.9.0.3:8080" || fail=1; echo "KA service with both up after $(awk -v a=$t0 -v b=$(up) 'BEGIN{print b-a}') s"
ipvsadm -Ln
for r in 1 2 3; do
kill $B; wait $B 2>/dev/null; t=$(up)
waitnot "10.9.0.3:8080" || fail=1; echo "KA round $r: dead -> removed after $(awk -v a=$t -v b=$(up) 'BEGIN{print b-a}') s"
busybox httpd -f -p 10.9.0.3:8080 -h /tmp/www & B=$!; t=$(up)
waitfor "10.9.0.3:8080" || fail=1; echo "KA round $r: back -> added after $(awk -v a=$t -v b=$(up) 'BEGIN{print b-a}') s"
done
kill -TERM $K; t=$(up); wait $K; echo "KA keepalived exit $? after $(awk -v a=$t -v b=$(up) 'BEGIN{print b-a}') s; table after SIGTERM:"
ipvsadm -Ln
echo "KA now with -I (dont-release-ipvs):"
keepalived -n -l -C -I -f /tmp/ka/k.conf -p /tmp/ka/k.pid -c /tmp/ka/c.pid >> /tmp/ka/log 2>&1 & K=$!
waitfor "10.9.0.3:8080"; kill -TERM $K; wait $K; ipvsadm -Ln
echo "KA log tail:"; tail -15 /tmp/ka/log
kill $A $B
exit $fail
