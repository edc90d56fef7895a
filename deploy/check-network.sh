#!/usr/bin/env bash
# Check that the engine started by deploy/docker-engine.sh (no default bridge, no iptables
# rules) gives what docker-compose.yml needs: containers on a user-defined network find each
# other by name and connect, and a --network none container has nothing but loopback.
#
#   bash deploy/check-network.sh [IMAGE]       (IMAGE: bidel/bookworm:latest, from base-image.sh)
#
# Everything it creates is named bidel-check-* and removed on exit. Prints "N passed, N failed".
set -uo pipefail

IMAGE=${1:-bidel/bookworm:latest}
NET=bidel-check-net
SERVER=bidel-check-server
passed=0 failed=0

check() {  # check DESCRIPTION COMMAND...
    local what=$1 out; shift
    if out=$("$@" 2>&1); then
        echo "ok   $what${out:+: $(echo "$out" | tr '\n' ' ' | cut -c1-120)}"; passed=$((passed + 1))
    else
        echo "FAIL $what: $(echo "$out" | tr '\n' ' ' | cut -c1-300)"; failed=$((failed + 1))
    fi
}
cleanup() {
    docker rm -f "$SERVER" >/dev/null 2>&1
    docker network rm "$NET" >/dev/null 2>&1
}
trap cleanup EXIT

docker image inspect "$IMAGE" >/dev/null 2>&1 || { echo "no image $IMAGE: run deploy/base-image.sh" >&2; exit 1; }
cleanup

# perl-base (in every Debian image) answers "pong" to each connection on port 7777.
server_script='use IO::Socket::INET; my $s = IO::Socket::INET->new(LocalPort => 7777, Listen => 5, ReuseAddr => 1) or die $!; while (my $c = $s->accept) { print $c "pong\n"; close $c }'
# bash's /dev/tcp: connect to the server by name and read one line.
client_script='exec 3<>/dev/tcp/'"$SERVER"'/7777 && read -r line <&3 && echo "$line" && [ "$line" = pong ]'

check "create a user-defined network" docker network create --label org.bidel.check=1 "$NET"
check "start a server container on it" docker run -d --name "$SERVER" --network "$NET" "$IMAGE" perl -e "$server_script"
sleep 1
server_ip=$(docker inspect --format "{{ (index .NetworkSettings.Networks \"$NET\").IPAddress }}" "$SERVER" 2>/dev/null)
check "DNS: another container resolves the server by name" \
    docker run --rm --network "$NET" "$IMAGE" sh -c "getent hosts $SERVER | grep -F '$server_ip'"
check "TCP: another container connects to the server by name" \
    docker run --rm --network "$NET" "$IMAGE" bash -c "$client_script"
check "--network none: only loopback" \
    docker run --rm --network none "$IMAGE" sh -c 'ls /sys/class/net | tr "\n" " " | grep -qx "lo " && echo "interfaces: lo"'
check "--network none: the server is unreachable" \
    docker run --rm --network none "$IMAGE" bash -c "! timeout 3 bash -c 'exec 3<>/dev/tcp/$server_ip/7777' 2>/dev/null && echo 'connect refused'"
check "--network none: no name resolution" \
    docker run --rm --network none "$IMAGE" sh -c "! getent hosts $SERVER && echo 'unresolved'"

echo "network check: $passed passed, $failed failed"
[ "$failed" = 0 ]
