#!/usr/bin/env python3
"""gencxx.py - write a C++ project big the way real test binaries are big:
NTU translation units, each with FUNCS plain functions and TEMPLATES class
templates instantiated over their own key and value types (so every
instantiation of std::map, std::vector and std::sort is distinct and gets
its own code and DWARF), plus a test runner main() that runs NTESTS
"tests", each a short CPU-bound walk through functions of several units.
With the defaults, tens of thousands of functions and well over a hundred
megabytes of DWARF at -O2 -g. Used by bench/symbolize.sh; generated at
bench time, never committed.

    gencxx.py DIR [NTU] [FUNCS] [TEMPLATES] [NTESTS]
"""
import os
import sys

out = sys.argv[1]
ntu = int(sys.argv[2]) if len(sys.argv) > 2 else 40
funcs = int(sys.argv[3]) if len(sys.argv) > 3 else 300
templates = int(sys.argv[4]) if len(sys.argv) > 4 else 48
ntests = int(sys.argv[5]) if len(sys.argv) > 5 else 200
os.makedirs(out, exist_ok=True)

HEAD = """#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>
"""

for k in range(ntu):
    src = [HEAD, "namespace gen%d {" % k]
    src.append("""
template <int N> struct Key {
	std::string s;
	long v;
	bool operator<(const Key &o) const { return v != o.v ? v < o.v : s < o.s; }
};
template <int N> struct Val {
	double d[N % 3 + 1];
};
template <int N> struct Node {
	std::map<Key<N>, std::vector<Val<N>>> m;
	static long mix(long x)
	{
		for (int i = 0; i < N % 5 + 2; i++)
			x = x * 6364136223846793005L + 1442695040888963407L + i;
		return x;
	}
	long run(long x)
	{
		Key<N> key{ std::to_string(x % 7), x % 13 };
		std::vector<Val<N>> &v = m[key];
		Val<N> val{};
		val.d[0] = (double)mix(x);
		v.push_back(val);
		std::sort(v.begin(), v.end(), [](const Val<N> &a, const Val<N> &b) { return a.d[0] < b.d[0]; });
		if (v.size() > 8)
			v.clear();
		std::ostringstream os;
		os << key.s << v.size();
		return (long)os.str().size() + mix(x ^ (long)v.size());
	}
};
""")
    for t in range(templates):
        src.append("static Node<%d> node%d;" % (t, t))
    for j in range(funcs):
        t = (j * 7 + k) % templates
        src.append("""__attribute__((noinline)) long f%d(long x)
{
	long s = x;
	for (int i = 0; i < %d; i++)
		s = (s ^ (s >> 7)) * 31 + i;
	return s + node%d.run(x + %d);
}""" % (j, 20 + (j * 13 + k) % 60, t, j))
    src.append("} // namespace gen%d" % k)
    src.append("long tu%d_entry(long x, int spread)\n{\n\tlong s = 0;" % k)
    src.append("\tswitch ((x + spread) %% %d) {" % min(funcs, 64))
    for j in range(min(funcs, 64)):
        src.append("\tcase %d: for (int r = 0; r < spread; r++) s += gen%d::f%d(x + r) + gen%d::f%d(x - r); break;" %
                   (j, k, (j * 5) % funcs, k, (j * 11 + 3) % funcs))
    src.append("\t}\n\treturn s;\n}")
    with open(os.path.join(out, "tu%d.cpp" % k), "w") as f:
        f.write("\n".join(src) + "\n")

main = ["#include <cstdio>", "#include <cstdlib>", "#include <cstring>"]
for k in range(ntu):
    main.append("long tu%d_entry(long x, int spread);" % k)
main.append("typedef long (*entry)(long, int);")
main.append("static const entry entries[] = { %s };" % ", ".join("tu%d_entry" % k for k in range(ntu)))
main.append("""
/* NTESTS tests; test i walks through four units. argv[1]: a test name
 * filter (substring), argv[2]: how much work each test does. */
int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : "";
	int spread = argc > 2 ? atoi(argv[2]) : 40;
	long sink = 0;
	int ran = 0;
	for (int i = 0; i < %d; i++) {
		char name[64];
		snprintf(name, sizeof(name), "Suite%%d.Test%%d", i %% 10, i);
		if (*only && !strstr(name, only))
			continue;
		printf("[ RUN      ] %%s\\n", name);
		for (int u = 0; u < 4; u++)
			sink += entries[(i * 7 + u * 13) %% %d]((long)i * 977 + u, spread);
		printf("[       OK ] %%s\\n", name);
		ran++;
	}
	printf("%%d tests ran (%%ld)\\n", ran, sink & 1);
	return 0;
}""" % (ntests, ntu))
with open(os.path.join(out, "main.cpp"), "w") as f:
    f.write("\n".join(main) + "\n")

objs = " ".join("tu%d.o" % k for k in range(ntu))
with open(os.path.join(out, "Makefile"), "w") as f:
    f.write("""CXX ?= g++
CXXFLAGS ?= -O2 -g -fno-omit-frame-pointer
bigtests: main.o %s
\t$(CXX) $(CXXFLAGS) -o $@ $^
%%.o: %%.cpp
\t$(CXX) $(CXXFLAGS) -c -o $@ $<
""" % objs)
