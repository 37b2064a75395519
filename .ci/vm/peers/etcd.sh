#!/bin/sh
# In the VM (IPVSNL_VM_PEERS=1; run by scripts/measure/peers): three etcd members on
# 10.8.0.1-3 (on lo), data dirs under /tmp. Prints the time to
# `etcdctl endpoint health` of all three, a put/get, the leader, and the time
# from SIGKILL of the leader to a put accepted through the other two
# (tries of 0.5 s each, at most 100). Exit status 1 when a step failed.
fail=0
up() { cut -d' ' -f1 /proc/uptime; }
el() { awk -v a=$1 -v b=$(up) 'BEGIN{print b-a}'; }
C=""; for i in 1 2 3; do ip addr add 10.8.0.$i/32 dev lo; C="$C${C:+,}e$i=http://10.8.0.$i:2380"; done
EP=http://10.8.0.1:2379,http://10.8.0.2:2379,http://10.8.0.3:2379
t0=$(up)
for i in 1 2 3; do
  mkdir -p /tmp/e$i
  etcd --name e$i --data-dir /tmp/e$i --listen-peer-urls http://10.8.0.$i:2380 --initial-advertise-peer-urls http://10.8.0.$i:2380 \
    --listen-client-urls http://10.8.0.$i:2379 --advertise-client-urls http://10.8.0.$i:2379 \
    --initial-cluster $C --initial-cluster-state new --log-level error > /tmp/e$i/log 2>&1 &
  eval P$i=$!
done
n=0; until etcdctl --endpoints=$EP --command-timeout=1s endpoint health >/tmp/h 2>&1; do n=$((n+1)); [ $n -gt 100 ] && { fail=1; break; }; sleep 0.1; done
echo "ETCD healthy after $(el $t0) s:"; cat /tmp/h
etcdctl --endpoints=$EP put k v1 && etcdctl --endpoints=$EP get k
L=$(etcdctl --endpoints=$EP endpoint status | awk -F', ' '$5=="true"{print $1}')
echo "ETCD leader $L"
for i in 1 2 3; do case $L in *10.8.0.$i:*) eval kill -9 \$P$i; eval wait \$P$i 2>/dev/null;; esac; done
t=$(up)
OTH=$(echo $EP | tr , '\n' | grep -v "$L" | tr '\n' , | sed 's/,$//')
n=0; until etcdctl --endpoints=$OTH --command-timeout=0.5s put k v2 >/dev/null 2>&1; do n=$((n+1)); [ $n -gt 100 ] && { fail=1; break; }; done
echo "ETCD put through the others after leader kill: $(el $t) s ($n failed tries)"
etcdctl --endpoints=$OTH get k | grep -qx v2 || fail=1; etcdctl --endpoints=$OTH endpoint status
kill $P1 $P2 $P3 2>/dev/null; wait
exit $fail
