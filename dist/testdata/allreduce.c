/*
 * Open MPI's own MPI_Allreduce on the sizes of dist's BenchmarkAllReduce, to
 * compare the two (see ../README.md):
 *
 *	mpicc -O2 -o allreduce allreduce.c
 *	mpirun -np 2 --oversubscribe ./allreduce 20
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, n, iters = argc > 1 ? atoi(argv[1]) : 20;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	for (long size = 1 << 10; size <= 64 << 20; size <<= 2) {
		float *x = calloc(size / 4, 4);
		MPI_Allreduce(MPI_IN_PLACE, x, size / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		double t = MPI_Wtime();
		for (int i = 0; i < iters; i++) {
			MPI_Allreduce(MPI_IN_PLACE, x, size / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		}
		t = (MPI_Wtime() - t) / iters;
		if (rank == 0) {
			printf("MPI_Allreduce %8ld bytes %12.1f us %10.2f MB/s %8.3f bus-GB/s\n", size, t * 1e6,
			       size / t / 1e6, size / t * 2 * (n - 1) / n / 1e9);
		}
		free(x);
	}
	MPI_Finalize();
	return 0;
}
