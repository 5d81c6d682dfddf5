/* rpc.h - the calls of the tfgb.v1.Bench service (proto/tfgb.proto), as
 * numbers: its methods and the gRPC status codes a call ends with.  The
 * transports carry them (transport.h), the codecs know which methods
 * carry tensors (codec.h). */
#ifndef TFGB_RPC_H
#define TFGB_RPC_H

/* Method numbers: the socket framing's `method` field (the wire contract (proto/tfgb.proto)). */
enum tr_method {
	TR_ECHO = 1,
	TR_ACK = 2,
	TR_PULL = 3,
	TR_ECHO_TENSOR = 4,
	TR_ACK_TENSOR = 5,
	TR_INFO = 6,        /* untimed: who the server is (srvinfo.h) */
	TR_ECHO_TENSOR_ZC = 7, /* EchoTensor's bundle, answered in place (mode tensorflow) */
	TR_ACK_TENSOR_ZC = 8,  /* AckTensor's, likewise */
	TR_PULL_TENSOR = 9,    /* a variable by name, dtype and shape (mode serialized) */
	TR_PULL_TENSOR_ZC = 10, /* PullTensor answered without a copy (mode tensorflow) */
	TR_METHOD_LAST = TR_PULL_TENSOR_ZC,
};

/* The tensor methods: their bundles (codec.h). */
static inline int tr_method_tensor(int m)
{
	return m == TR_ECHO_TENSOR || m == TR_ACK_TENSOR || m == TR_ECHO_TENSOR_ZC ||
	       m == TR_ACK_TENSOR_ZC;
}

/* PullTensor and PullTensorZeroCopy: a TensorPull request, a one-tensor
 * bundle in reply (codec.h). */
static inline int tr_method_pulls_tensor(int m)
{
	return m == TR_PULL_TENSOR || m == TR_PULL_TENSOR_ZC;
}

/* Echo's and EchoTensor's kin: the reply is the request again. */
static inline int tr_method_echoes(int m)
{
	return m == TR_ECHO || m == TR_ECHO_TENSOR || m == TR_ECHO_TENSOR_ZC;
}

/* gRPC status codes, the numbers on the wire. */
enum tr_status {
	TR_OK = 0,
	TR_CANCELLED = 1,
	TR_UNKNOWN = 2,
	TR_INVALID_ARGUMENT = 3,
	TR_DEADLINE_EXCEEDED = 4,
	TR_RESOURCE_EXHAUSTED = 8,
	TR_UNIMPLEMENTED = 12,
	TR_INTERNAL = 13,
	TR_UNAVAILABLE = 14,
};

#endif
