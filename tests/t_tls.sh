#!/bin/sh
# TLS on the grpc transport ([server] tls_cert, tls_key, tls_ca) with a CA
# and a server certificate made by openssl for this run: latency against
# the TLS server it starts (IP SAN) and against one started by hand (DNS
# SAN); a plaintext worker, a worker with the wrong CA and a TLS worker
# against a plaintext server all fail with exit 1 and say why; the control
# service speaks TLS only; bad key combinations and files are job errors
# (exit 2); a key that is not the certificate's fails the server (exit 1);
# throughput with 2 PS x 2 workers over TLS, control service included.
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
command -v openssl >/dev/null 2>&1 || skip "no openssl (Debian package openssl)"
$PY -c 'import json' 2>/dev/null || skip "no /usr/bin/python3"

out=$(mktemp -d)
bg=
cleanup_on_exit "$out"
# resolving a host name (step 2: the DNS SAN) goes through gRPC's c-ares
# resolver, which leaks 10 bytes by LeakSanitizer's count, TLS or not.
# OpenSSL's per-thread error state (904 bytes, CRYPTO_zalloc) is freed by
# a thread-key destructor that OpenSSL's own atexit handler deletes: a
# gRPC pool thread that ends while the process exits keeps its state
# (seen once in CI: 2 x 904 bytes, a stack of malloc and CRYPTO_zalloc
# alone, as LeakSanitizer cannot unwind through libcrypto).  Allocations
# of libcrypto's own are suppressed; a TLS object tfgb or gRPC failed to
# release still shows its gRPC allocations.
printf 'leak:libcares.so\nleak:CRYPTO_zalloc\n' >"$out/lsan.supp"
export LSAN_OPTIONS="suppressions=$out/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# the CA, a server certificate it signs for localhost and 127.0.0.1, a
# second CA that signed nothing, and a key that belongs to no certificate
cd "$out" || fail "no temp dir"
{
	openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
		-subj /CN=t_tls-ca &&
	openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=localhost &&
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.cnf &&
	openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
		-extfile san.cnf -out srv.pem &&
	openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.pem -days 2 \
		-subj /CN=t_tls-other
} >openssl.log 2>&1 || { cat openssl.log; fail "openssl could not make the certificates"; }
cd - >/dev/null || fail "cd back"

Q="-q -s job.warmup=100ms -s job.duration=500ms -s monitor.interval=0 -s server.threads=1
-s payload.iovecs=2 -s payload.categories=small"
SRV="-s server.tls_cert=$out/srv.pem -s server.tls_key=$out/srv.key"
CA="-s server.tls_ca=$out/ca.pem"
ok_json='d["status"] == "ok" and d["tls"] is True and d["calls"] > 0 and d["errors"] == 0'

# start_serve PORT ARGS...: a `tfgb serve` in the background, waited for
start_serve() {
	p=$1
	shift
	: >"$out/ready"
	TFGB_READY_FD=3 $TFGB serve -s cluster.ps="localhost:$p" -s server.threads=1 "$@" \
		3>"$out/ready" 2>"$out/serve.err" &
	bg="$bg $!"
	i=0
	until grep -q '^ready$' "$out/ready"; do
		i=$((i + 1))
		[ "$i" -gt $((200 * SLOW)) ] && { cat "$out/serve.err"; fail "serve $* did not get ready"; }
		sleep 0.1
	done
}
stop_serves() {
	for p in $bg; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	bg=
}

# 1. latency starts its own TLS server: the target is an IP address
port=$(free_port) || fail "no free port"
$TFGB latency $Q $SRV $CA -s cluster.ps="127.0.0.1:$port" -f json >"$out/a.json" 2>"$out/a.err" ||
	{ cat "$out/a.err"; fail "latency over TLS with its own server"; }
json_check "$ok_json" <"$out/a.json" || fail "latency over TLS: bad JSON result"
grep -q 'tls_key' "$out/a.json" || fail "the JSON result's job lacks the TLS keys"
grep -q 'BEGIN' "$out/a.json" && fail "the JSON result holds PEM text"
$TFGB latency $Q $SRV $CA -s cluster.ps="127.0.0.1:$port" -s job.duration=100ms |
	grep -q '^# transport grpc over TLS,' || fail "the text report does not say TLS"
$TFGB latency $Q -s cluster.ps="127.0.0.1:$port" -s job.duration=100ms -f json |
	json_check 'd["tls"] is False' || fail "a plaintext run says tls"

# 2. a TLS server started by hand (hosting the control service): the
# target is a host name
port=$(free_port) || fail "no free port"
start_serve "$port" $SRV
$TFGB latency $Q $CA -s cluster.ps="localhost:$port" -f json >"$out/b.json" 2>"$out/b.err" ||
	{ cat "$out/b.err"; fail "latency against a TLS server started by hand"; }
json_check "$ok_json" <"$out/b.json" || fail "latency against serve: bad JSON result"
grep -q "^tfgb serve: listening on localhost:$port (grpc over TLS, 1 thread); control service" \
	"$out/serve.err" || { cat "$out/serve.err"; fail "serve does not say it listens with TLS"; }

# 3. wrong setups against it fail, exit 1, within the deadline, saying why
expect_fail() { # WHAT PATTERN ARGS...: latency with ARGS must exit 1 naming PATTERN
	what=$1 pat=$2
	shift 2
	t0=$(date +%s)
	$TFGB latency $Q -s job.timeout=2s -s cluster.ps="localhost:$port" "$@" \
		>"$out/f.out" 2>"$out/f.err"
	rc=$?
	[ "$rc" = 1 ] || { cat "$out/f.err"; fail "$what: exit $rc, not 1"; }
	[ $(($(date +%s) - t0)) -lt 60 ] || fail "$what: took over a minute"
	grep -q "$pat" "$out/f.err" || { cat "$out/f.err"; fail "$what: no '$pat' in the message"; }
	[ -s "$out/f.out" ] && fail "$what: printed a report"
	return 0
}
expect_fail "plaintext worker, TLS server" "if the server uses TLS, set server.tls_ca"
expect_fail "worker with the wrong CA" "TLS handshake failed" -s server.tls_ca="$out/other.pem"

# 4. the control service (one port below PS 0) speaks TLS only
if $PY -c 'import grpc' 2>/dev/null; then
	$PY - "$((port - 1))" "$out/ca.pem" <<'PY' || fail "the control service is not TLS-only"
import grpc, sys
target = "localhost:" + sys.argv[1]
try:
    grpc.channel_ready_future(grpc.insecure_channel(target)).result(timeout=2)
    sys.exit("a plaintext channel got ready")
except grpc.FutureTimeoutError:
    pass
creds = grpc.ssl_channel_credentials(root_certificates=open(sys.argv[2], "rb").read())
grpc.channel_ready_future(grpc.secure_channel(target, creds)).result(timeout=20)
PY
else
	skip_part "4. the control service's TLS-only check: needs the Python module grpc (Debian package python3-grpcio)"
fi
stop_serves

# 5. a TLS worker against a plaintext server
start_serve "$port"
expect_fail "TLS worker, plaintext server" "TLS handshake failed" $CA
stop_serves

# 6. job errors: exit 2, one line naming the place and the key
expect_usage() { # WHAT PATTERN ARGS...: serve with ARGS must exit 2 naming PATTERN
	what=$1 pat=$2
	shift 2
	$TFGB serve -s cluster.ps="localhost:$port" "$@" >"$out/u.out" 2>"$out/u.err"
	rc=$?
	[ "$rc" = 2 ] || { cat "$out/u.err"; fail "$what: exit $rc, not 2"; }
	[ "$(wc -l <"$out/u.err")" = 1 ] || { cat "$out/u.err"; fail "$what: not one line"; }
	grep -q -- "$pat" "$out/u.err" || { cat "$out/u.err"; fail "$what: no '$pat'"; }
}
expect_usage "cert without key" "^tfgb: -s #2: server.tls_cert = .*needs server.tls_key" \
	-s server.tls_cert="$out/srv.pem"
expect_usage "key without cert" "^tfgb: -s #2: server.tls_key = .*needs server.tls_cert" \
	-s server.tls_key="$out/srv.key"
expect_usage "missing file" "server.tls_ca = $out/none.pem: cannot open it: No such file" \
	-s server.tls_ca="$out/none.pem"
expect_usage "not PEM" "server.tls_cert = $out/san.cnf: the file holds no PEM CERTIFICATE" \
	-s server.tls_cert="$out/san.cnf" -s server.tls_key="$out/srv.key"
expect_usage "socket transport" "TLS is supported only with transport = grpc" \
	-s job.transport=socket $CA
printf '[job]\ntransport = grpc\n[server]\ntls_key = %s\n' "$out/srv.key" >"$out/k.ini"
expect_usage "in a job file" "^tfgb: $out/k.ini:4: server.tls_key = " -c "$out/k.ini"

# 7. a key that is not the certificate's: the server fails to listen
$TFGB serve -q -s cluster.ps="localhost:$port" -s server.tls_cert="$out/srv.pem" \
	-s server.tls_key="$out/other.key" 2>"$out/k.err"
rc=$?
[ "$rc" = 1 ] || { cat "$out/k.err"; fail "mismatched key: exit $rc, not 1"; }
grep -q "does the key belong to the certificate" "$out/k.err" ||
	{ cat "$out/k.err"; fail "mismatched key: unclear message"; }

# 8. throughput, 2 PS x 2 workers, over TLS (control service included)
base=$(free_ports 2) || fail "no free ports"
$TFGB throughput $Q $SRV $CA -s cluster.ps="127.0.0.1:$base" -s cluster.ps_count=2 \
	-s cluster.workers=2 -f json >"$out/t.json" 2>"$out/t.err" ||
	{ cat "$out/t.err"; fail "throughput over TLS"; }
json_check "$ok_json"' and d["throughput"]["reported"] == 2' <"$out/t.json" ||
	fail "throughput over TLS: bad JSON result"
echo "ok"
