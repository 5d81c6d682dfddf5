/* mpi_allreduce.c - the floor for `tfgb collective`: Open MPI's own
 * MPI_Allreduce (sum of float32, in place), timed as nccl-tests times it.
 *
 * Build (`make bench/mpi_allreduce`, or by hand):
 *   mpicc -O2 -std=c11 -D_GNU_SOURCE -o bench/mpi_allreduce bench/mpi_allreduce.c
 * Run:
 *   mpirun -np N bench/mpi_allreduce [-n ITERS] [-w WARMUP] BYTES
 * Open MPI picks its algorithm; `--mca coll_tuned_use_dynamic_rules 1
 * --mca coll_tuned_allreduce_algorithm 4` forces its ring, and `--mca pml
 * ob1 --mca btl tcp,self` its TCP byte transport.
 *
 * After WARMUP operations and a barrier, every rank times ITERS
 * operations back to back; the time of an operation is the mean over the
 * batch, the slowest rank's (MPI_Reduce with MPI_MAX), as nccl-tests
 * takes it.  Rank 0 prints one line: the size, the mean time in us,
 * algbw and busbw = algbw x 2(N-1)/N in GB/s (10^9 bytes a second).
 * Exit status 0, 1 on an MPI failure, 2 on bad arguments.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long iters = 20, warmup = 5, bytes;
	int opt, rank, size;
	double t0, mine, slowest;
	float *buf;
	size_t count;

	while ((opt = getopt(argc, argv, "n:w:")) != -1) {
		if (opt == 'n')
			iters = atol(optarg);
		else if (opt == 'w')
			warmup = atol(optarg);
		else
			return 2;
	}
	if (optind != argc - 1 || (bytes = atol(argv[optind])) < 4 || iters < 1 || warmup < 0 ||
	    bytes / 4 > 0x7fffffffL) {
		fprintf(stderr, "usage: mpi_allreduce [-n ITERS] [-w WARMUP] BYTES (>= 4)\n");
		return 2;
	}
	count = (size_t)bytes / sizeof(float);
	if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
		return 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!(buf = malloc(count * sizeof *buf))) {
		fprintf(stderr, "mpi_allreduce: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (size_t i = 0; i < count; i++)
		buf[i] = (float)((rank + 1) * (int)((i & 15) + 1));
	for (long i = 0; i < warmup; i++)
		MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now_s();
	for (long i = 0; i < iters; i++)
		if (MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) !=
		    MPI_SUCCESS)
			MPI_Abort(MPI_COMM_WORLD, 1);
	mine = (now_s() - t0) / (double)iters;
	MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		double algbw = (double)(count * sizeof(float)) / slowest / 1e9;
		printf("allreduce %d ranks %zu bytes: mean %.2f us, algbw %.4f GB/s, busbw %.4f GB/s\n",
		       size, count * sizeof(float), slowest * 1e6, algbw,
		       algbw * 2.0 * (size - 1) / size);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
