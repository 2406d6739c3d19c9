#!/usr/bin/env python3
"""How long a PUBLISH takes to reach a subscriber: on the node itself, or across a Redis
Cluster's bus (published on one master, heard on another). Raw RESP over sockets with
TCP_NODELAY, so the client adds nothing; 200 publishes, 2 ms apart; prints p50, p99 and max.

    python3 bench/pubsub-latency.py PUBLISH_PORT SUBSCRIBE_PORT
(ports of two nodes of `oversell up --lock-store cluster`, printed by `up`)
"""
import socket
import sys
import time


def conn(port):
    s = socket.create_connection(("127.0.0.1", port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1); return s
def cmd(s, *a):
    s.sendall(("*%d\r\n" % len(a) + "".join("$%d\r\n%s\r\n" % (len(x), x) for x in a)).encode())
if len(sys.argv) != 3:
    sys.exit("usage: python3 bench/pubsub-latency.py PUBLISH_PORT SUBSCRIBE_PORT")
pub_port, sub_port = int(sys.argv[1]), int(sys.argv[2])
sub = conn(sub_port); cmd(sub, "SUBSCRIBE", "bustest"); time.sleep(0.2); sub.recv(4096)
pub = conn(pub_port)
lat = []
for i in range(200):
    t = time.perf_counter(); cmd(pub, "PUBLISH", "bustest", "x"); pub.recv(100)
    buf = b""
    while b"x\r\n" not in buf: buf += sub.recv(4096)
    lat.append((time.perf_counter() - t) * 1000); time.sleep(0.002)
lat.sort(); print("p50 %.2f p99 %.2f max %.2f ms" % (lat[100], lat[197], lat[-1]))
