# context-lib.sh - helpers the context tests (t3000-t3099) share: a clean
# environment (no CI variables of the machine running the tests leak in),
# git identities, a small upstream repository, and JSON field access.
TFC=$BUILD/tools/tf-context
export GIT_AUTHOR_NAME=Test GIT_AUTHOR_EMAIL=test@example.com
export GIT_COMMITTER_NAME=Test GIT_COMMITTER_EMAIL=test@example.com
export GIT_CONFIG_NOSYSTEM=1
mkdir -p "$SCRATCH/home"
export HOME=$SCRATCH/home

# Run with nothing but PATH, HOME and the given NAME=VALUE assignments.
clean() {
	env -i PATH="$PATH" HOME="$HOME" GIT_CONFIG_NOSYSTEM=1 "$@"
}

# jfield FILE KEY: a top-level value of a JSON object; null prints "null",
# booleans "true"/"false".
jfield() {
	python3 -c 'import json,sys
v = json.load(open(sys.argv[1])).get(sys.argv[2])
print("null" if v is None else json.dumps(v) if isinstance(v, (bool, list, dict)) else v)' "$1" "$2"
}

# up/: main (3 commits), feature forked after the 2nd (edits lib.c lines
# 3-4, adds new.c, renames old.c -> moved.c changing line 2), main +1.
make_upstream() {
	git init -q -b main up &&
	(cd up &&
	 printf '1\n2\n3\n4\n5\n6\n7\n8\n' > lib.c &&
	 printf 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n' > old.c &&
	 git add . && git commit -qm one &&
	 echo 9 >> lib.c && git commit -qam two &&
	 git checkout -qb feature &&
	 sed -i 's/^3$/three/; s/^4$/four/' lib.c && git commit -qam f1 &&
	 printf 'x\ny\nz\n' > new.c && git add new.c && git commit -qm f2 &&
	 git mv old.c moved.c && sed -i 's/^b$/B/' moved.c && git commit -qam f3 &&
	 git checkout -q main && echo main > other.c && git add other.c && git commit -qm three)
}
