#!/bin/sh
# A ZooKeeper server of the compose fleet: Debian's package, configured as `oversell up`
# configures its own (src/launch/zookeeper_servers.rs: tick 500 ms, sessions 1-10 s, no admin server,
# the four-letter words the tests read), and run in the foreground.
#   ZOO_MY_ID   this server's id (default 1)
#   ZOO_SERVERS the ensemble, "id=host;id=host;…" (unset: standalone)
set -eu
data=/tmp/zookeeper
mkdir -p "$data"
echo "${ZOO_MY_ID:-1}" > "$data/myid"
{
  echo "tickTime=500"
  echo "initLimit=10"
  echo "syncLimit=5"
  echo "minSessionTimeout=1000"
  echo "maxSessionTimeout=10000"
  echo "dataDir=$data"
  echo "clientPort=2181"
  echo "maxClientCnxns=0"
  echo "preAllocSize=4096"
  echo "admin.enableServer=false"
  echo "4lw.commands.whitelist=ruok,srvr,mntr,stat,conf"
  # Every server listens on all its addresses for its peers: its own name resolves to the
  # container's address only once the network is up.
  echo "quorumListenOnAllIPs=true"
  if [ -n "${ZOO_SERVERS:-}" ]; then
    echo "$ZOO_SERVERS" | tr ';' '\n' | while IFS='=' read -r id host; do
      [ -n "$id" ] && echo "server.$id=$host:2888:3888"
    done
  fi
} > /tmp/zoo.cfg
exec java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData -XX:+ExitOnOutOfMemoryError \
  -cp /usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar \
  org.apache.zookeeper.server.quorum.QuorumPeerMain /tmp/zoo.cfg
