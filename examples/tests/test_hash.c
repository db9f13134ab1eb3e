/* test_hash.c - fast: known CRC-32 and FNV-1a values. */
#include "check.h"
#include "mini.h"

#include <string.h>

int main(void)
{
	const char *s = "123456789";
	CHECK(hash_crc32(s, strlen(s)) == 0xcbf43926u);
	CHECK(hash_fnv1a("", 0) == 0xcbf29ce484222325ULL);
	CHECK(hash_fnv1a("a", 1) == 0xaf63dc4c8601ec8cULL);
	static uint8_t buf[1 << 20];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 31);
	uint32_t c = 0;
	for (int round = 0; round < 4; round++)
		c ^= hash_crc32(buf, sizeof(buf));
	CHECK(c == 0);
	printf("test_hash: ok\n");
	return 0;
}
