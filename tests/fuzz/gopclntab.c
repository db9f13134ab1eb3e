/*
 * gopclntab.c - fuzz target: the reader of Go's runtime function table
 * (src/symbolize/gopclntab.c), .gopclntab of a Go binary linked without
 * symbols or DWARF (`go test`, `go run`): the section's bytes through
 * tf_sym_go_parse(), the reader apart from the ELF file, then what the
 * symbolizer and the unwinder ask of it for each function: its name and
 * range, the file and line of a pc, the frame size at a pc.
 *
 * Beyond not crashing: names and files handed out lie inside the table
 * and end there, and a function's range is not empty.
 */
#include "fuzz.h"
#include "symbolize/symbolize_int.h"

#define TEXT 0x401000
#define MAX_FUNCS 512

static void inside(const uint8_t *data, size_t size, const char *s, const char *what)
{
	FUZZ_CHECK((const uint8_t *)s >= data && (const uint8_t *)s < data + size &&
		   memchr(s, '\0', (size_t)(data + size - (const uint8_t *)s)),
		   "%s outside the table", what);
}

static void at(const tf_sym_go *g, const uint8_t *data, size_t size, uint64_t pc)
{
	const char *file;
	int line, start;

	if (tf_sym_go_line(g, pc, &file, &line, &start) && file)
		inside(data, size, file, "a file name");
	(void)tf_sym_go_spdelta(g, pc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tf_sym_go *g = tf_sym_go_parse(data, size, TEXT);

	if (!g)
		return 0;
	size_t n = tf_sym_go_nfuncs(g);
	for (size_t i = 0; i < n && i < MAX_FUNCS; i++) {
		uint64_t entry, end;
		const char *name;
		if (!tf_sym_go_func(g, i, &entry, &end, &name))
			continue;
		inside(data, size, name, "a function name");
		FUZZ_CHECK(end > entry, "function %zu: empty range", i);
		at(g, data, size, entry);
		at(g, data, size, entry + 1);
		at(g, data, size, entry + (end - entry) / 2);
		at(g, data, size, end - 1);
	}
	at(g, data, size, 0);
	at(g, data, size, TEXT);
	at(g, data, size, UINT64_MAX);
	tf_sym_go_free(g);
	return 0;
}
