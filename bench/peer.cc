// peer.cc - the hand-written reference peer tfgb is measured against
// (bench/vs_peer.sh, `make bench`): a server and a client written with the
// gRPC C++ generic API on the same libgrpc as tfgb, as fast as that API
// allows, and nothing else (no engine, no histogram buckets, no JSON).
//
// Build (from the top of the tree; `make bench` does it, not `make`):
//   c++ -O2 -std=c++17 -o bench/peer bench/peer.cc \
//       $(pkg-config --cflags --libs grpc++)
//
//   bench/peer serve HOST:PORT
//       An async generic service (grpc::AsyncGenericService), ONE server
//       completion queue polled by ONE thread, DEPTH (8) calls requested
//       ahead and each re-requested the moment its call arrives.  Echo
//       answers with the received ByteBuffer itself (no copy), Ack with
//       the request's length as 8 bytes big-endian, anything else with
//       UNIMPLEMENTED.  A call is: RequestCall, Read, WriteAndFinish (the
//       C++ API's shortest unary path for a generic service).  Runs until
//       SIGTERM or SIGINT.
//
//   bench/peer latency [-w MS] [-n CALLS] HOST:PORT SIZE[,SIZE...]
//       Echo calls one at a time; after MS ms of warm-up (default 1000)
//       times CALLS calls (default 10000) and prints
//         peer latency: N calls p50 X us mean Y us
//   bench/peer bandwidth [-w MS] [-d MS] [-i INFLIGHT] HOST:PORT SIZE[,...]
//       Ack calls, INFLIGHT (default 16) outstanding on one channel, each
//       re-issued from the completion of the last; after MS ms of warm-up
//       (default 1000) counts the request bytes of the calls that complete
//       within the window (-d, default 3000 ms) and prints
//         peer bandwidth: N calls B bytes S s MBps M
//       (MB = 10^6 bytes).
//   Both clients: one channel, one completion queue, a generic stub's
//   PrepareUnaryCall/StartCall/Finish (the async unary path), the request
//   a ByteBuffer of static slices over buffers made once (no copy), the
//   completion taken with CompletionQueue::Next on the calling thread.
//
// Both sides turn Abseil's mutex deadlock detector off first, as tfgb does
// (Debian builds Abseil without NDEBUG; see bench/README).
//
// Exit status 0, 1 on a failed call or connection, 2 on bad arguments.
#include <absl/synchronization/mutex.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

const char kEcho[] = "/tfgb.v1.Bench/Echo";
const char kAck[] = "/tfgb.v1.Bench/Ack";
constexpr int kDepth = 8;

uint64_t mono_ns()
{
	return std::chrono::duration_cast<std::chrono::nanoseconds>(
	           std::chrono::steady_clock::now().time_since_epoch())
	    .count();
}

int usage()
{
	std::fprintf(stderr,
	             "usage: peer serve HOST:PORT\n"
	             "       peer latency [-w MS] [-n CALLS] HOST:PORT SIZE[,SIZE...]\n"
	             "       peer bandwidth [-w MS] [-d MS] [-i INFLIGHT] HOST:PORT SIZE[,SIZE...]\n");
	return 2;
}

// ---- server ----

std::atomic<bool> g_stop{false};

// One requested call; re-requested (a new one) as soon as it arrives, so
// kDepth requests stay outstanding.  Freed when its reply is sent.
struct Call {
	enum { REQUESTED, READING, REPLYING } st = REQUESTED;
	grpc::GenericServerContext ctx;
	grpc::GenericServerAsyncReaderWriter rw{&ctx};
	grpc::ByteBuffer req, reply;
	unsigned char ack[8];
};

void serve_loop(grpc::AsyncGenericService *svc, grpc::ServerCompletionQueue *cq)
{
	auto request = [&] {
		Call *c = new Call;
		svc->RequestCall(&c->ctx, &c->rw, cq, cq, c);
	};
	for (int i = 0; i < kDepth; i++)
		request();
	void *tag;
	bool ok;
	while (cq->Next(&tag, &ok)) {
		Call *c = static_cast<Call *>(tag);
		switch (c->st) {
		case Call::REQUESTED:
			if (!ok) { // shutting down
				delete c;
				break;
			}
			request();
			c->st = Call::READING;
			c->rw.Read(&c->req, c);
			break;
		case Call::READING: {
			c->st = Call::REPLYING;
			const std::string &m = c->ctx.method();
			if (!ok) {
				c->rw.Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no request"), c);
			} else if (m == kEcho) {
				c->rw.WriteAndFinish(c->req, grpc::WriteOptions(), grpc::Status::OK, c);
			} else if (m == kAck) {
				uint64_t n = c->req.Length();
				for (int i = 7; i >= 0; i--, n >>= 8)
					c->ack[i] = (unsigned char)n;
				grpc::Slice s(c->ack, sizeof c->ack, grpc::Slice::STATIC_SLICE);
				c->reply = grpc::ByteBuffer(&s, 1);
				c->rw.WriteAndFinish(c->reply, grpc::WriteOptions(), grpc::Status::OK, c);
			} else {
				c->rw.Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "not here"), c);
			}
			break;
		}
		case Call::REPLYING:
			delete c;
			break;
		}
	}
}

int cmd_serve(int argc, char **argv)
{
	if (argc != 1)
		return usage();
	grpc::AsyncGenericService svc;
	grpc::ServerBuilder b;
	int port = 0;
	b.AddListeningPort(argv[0], grpc::InsecureServerCredentials(), &port);
	b.RegisterAsyncGenericService(&svc);
	b.SetMaxReceiveMessageSize(64 << 20);
	b.SetMaxSendMessageSize(-1);
	b.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
	std::unique_ptr<grpc::ServerCompletionQueue> cq = b.AddCompletionQueue();
	std::unique_ptr<grpc::Server> server = b.BuildAndStart();
	if (!server || port == 0) {
		std::fprintf(stderr, "peer serve: cannot listen on %s\n", argv[0]);
		return 1;
	}
	std::thread t(serve_loop, &svc, cq.get());
	struct sigaction sa = {};
	sa.sa_handler = [](int) { g_stop = true; };
	sigaction(SIGTERM, &sa, nullptr);
	sigaction(SIGINT, &sa, nullptr);
	while (!g_stop)
		usleep(100000);
	server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
	cq->Shutdown();
	t.join();
	return 0;
}

// ---- clients ----

struct Client {
	std::shared_ptr<grpc::Channel> ch;
	std::unique_ptr<grpc::GenericStub> stub;
	grpc::CompletionQueue cq;
	std::vector<std::vector<char>> bufs;
	std::vector<grpc::Slice> slices;
	size_t bytes = 0;

	int open(const char *target, const char *sizes)
	{
		for (const char *p = sizes; *p;) {
			char *end;
			unsigned long long n = std::strtoull(p, &end, 10);
			if (end == p || (*end && *end != ','))
				return -1;
			bufs.emplace_back(n, 'x');
			bytes += n;
			p = *end ? end + 1 : end;
		}
		for (auto &b : bufs)
			slices.emplace_back(b.data(), b.size(), grpc::Slice::STATIC_SLICE);
		grpc::ChannelArguments a;
		a.SetMaxReceiveMessageSize(-1);
		a.SetMaxSendMessageSize(-1);
		a.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
		ch = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), a);
		if (!ch->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
			std::fprintf(stderr, "peer: cannot connect to %s\n", target);
			return 1;
		}
		stub.reset(new grpc::GenericStub(ch));
		return 0;
	}
};

// One call in flight; reused for the next.
struct Slot {
	std::unique_ptr<grpc::ClientContext> ctx;
	std::unique_ptr<grpc::GenericClientAsyncResponseReader> rd;
	grpc::ByteBuffer req, resp;
	grpc::Status st;
	uint64_t t0;
};

void start(Client &c, Slot &s, const char *method)
{
	s.ctx.reset(new grpc::ClientContext);
	s.req = grpc::ByteBuffer(c.slices.data(), c.slices.size());
	s.t0 = mono_ns();
	s.rd = c.stub->PrepareUnaryCall(s.ctx.get(), method, s.req, &c.cq);
	s.rd->StartCall();
	s.rd->Finish(&s.resp, &s.st, &s);
}

int parse_ms(const char *s, long *out)
{
	char *end;
	long v = std::strtol(s, &end, 10);
	if (end == s || *end || v < 0)
		return -1;
	*out = v;
	return 0;
}

// The options of spec (-w, -n, -d, -i: non-negative numbers) into their
// variables; argc/argv left at the two operands HOST:PORT SIZES.  -1 on
// anything else.
int parse_opts(int &argc, char **&argv, const char *spec, long *w, long *n, long *d, long *i)
{
	int o;
	optind = 1;
	while ((o = getopt(argc + 1, argv - 1, spec)) != -1) {
		long *v = o == 'w' ? w : o == 'n' ? n : o == 'd' ? d : o == 'i' ? i : nullptr;
		if (!v || parse_ms(optarg, v) < 0)
			return -1;
	}
	argc -= optind - 1;
	argv += optind - 1;
	return argc == 2 ? 0 : -1;
}

int cmd_latency(int argc, char **argv)
{
	long warm = 1000, n = 10000, unused = 0;
	if (parse_opts(argc, argv, "w:n:", &warm, &n, &unused, &unused) < 0 || n < 1)
		return usage();
	Client c;
	int rc = c.open(argv[0], argv[1]);
	if (rc)
		return rc < 0 ? usage() : rc;
	std::vector<uint64_t> lat((size_t)n);
	Slot s;
	uint64_t warm_end = mono_ns() + (uint64_t)warm * 1000000u;
	for (long i = -1; i < n;) {
		void *tag;
		bool ok;
		start(c, s, kEcho);
		if (!c.cq.Next(&tag, &ok) || !ok || !s.st.ok() || s.resp.Length() != c.bytes) {
			std::fprintf(stderr, "peer latency: call failed: %s\n",
			             s.st.error_message().c_str());
			return 1;
		}
		uint64_t t = mono_ns();
		if (i < 0) {
			if (t >= warm_end)
				i = 0;
			continue;
		}
		lat[(size_t)i++] = t - s.t0;
	}
	double sum = 0;
	for (uint64_t v : lat)
		sum += (double)v;
	std::sort(lat.begin(), lat.end());
	std::printf("peer latency: %ld calls p50 %.2f us mean %.2f us\n", n,
	            (double)lat[(size_t)(n - 1) / 2] / 1e3, sum / (double)n / 1e3);
	return 0;
}

int cmd_bandwidth(int argc, char **argv)
{
	long warm = 1000, dur = 3000, inflight = 16, unused = 0;
	if (parse_opts(argc, argv, "w:d:i:", &warm, &unused, &dur, &inflight) < 0 || inflight < 1 ||
	    dur < 1)
		return usage();
	Client c;
	int rc = c.open(argv[0], argv[1]);
	if (rc)
		return rc < 0 ? usage() : rc;
	std::vector<Slot> slot((size_t)inflight);
	uint64_t w0 = mono_ns() + (uint64_t)warm * 1000000u;
	uint64_t w1 = w0 + (uint64_t)dur * 1000000u;
	uint64_t calls = 0;
	for (auto &s : slot)
		start(c, s, kAck);
	long out = inflight;
	while (out > 0) {
		void *tag;
		bool ok;
		if (!c.cq.Next(&tag, &ok) || !ok) {
			std::fprintf(stderr, "peer bandwidth: queue failed\n");
			return 1;
		}
		Slot &s = *static_cast<Slot *>(tag);
		if (!s.st.ok() || s.resp.Length() != 8) {
			std::fprintf(stderr, "peer bandwidth: call failed: %s\n",
			             s.st.error_message().c_str());
			return 1;
		}
		uint64_t t = mono_ns();
		if (t >= w0 && t < w1)
			calls++;
		if (t < w1)
			start(c, s, kAck);
		else
			out--;
	}
	double secs = (double)dur / 1e3, bytes = (double)calls * (double)c.bytes;
	std::printf("peer bandwidth: %llu calls %.0f bytes %.3f s MBps %.2f\n",
	            (unsigned long long)calls, bytes, secs, bytes / secs / 1e6);
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	// as tfgb does (grpcx_absl_nodeadlock in src/transport/grpc/grpcx.c):
	// Debian's Abseil runs its deadlock detector on every absl::Mutex
	// lock and unlock inside gRPC; a release build of Abseil has none
	absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
	if (argc < 2)
		return usage();
	std::string cmd = argv[1];
	if (cmd == "serve")
		return cmd_serve(argc - 2, argv + 2);
	if (cmd == "latency")
		return cmd_latency(argc - 2, argv + 2);
	if (cmd == "bandwidth")
		return cmd_bandwidth(argc - 2, argv + 2);
	return usage();
}
