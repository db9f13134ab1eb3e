/* test_matrix.c - CPU-heavy: products of identity and known matrices. */
#include "check.h"
#include "mini.h"

#define N 160

int main(void)
{
	static double a[N * N], b[N * N], c[N * N];
	for (int i = 0; i < N * N; i++) {
		a[i] = (i % 7) - 3;
		b[i] = (i % N) == (i / N); /* identity */
	}
	for (int round = 0; round < 75; round++) {
		matrix_multiply(a, b, c, N);
		for (int i = 0; i < N * N; i += 97)
			CHECK(c[i] == a[i]);
	}
	printf("test_matrix: ok\n");
	return 0;
}
