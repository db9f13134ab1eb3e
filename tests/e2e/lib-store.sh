# lib-store.sh - helpers for the baseline store's end-to-end tests
# (t5xxx), sourced after lib.sh: real git repositories in the scratch
# directory, run files, and a real smart-HTTP git server (lighttpd running
# git http-backend as CGI, basic auth) on a loopback port.

export GIT_AUTHOR_NAME=tester GIT_AUTHOR_EMAIL=tester@example.com
export GIT_COMMITTER_NAME=tester GIT_COMMITTER_EMAIL=tester@example.com
export GIT_CONFIG_NOSYSTEM=1 HOME="$SCRATCH/home"
mkdir -p "$HOME"
git config --global init.defaultBranch main
git config --global advice.detachedHead false
unset TESTFLAME_TOKEN GITHUB_TOKEN GITLAB_TOKEN TESTFLAME_STORE TESTFLAME_TOKEN_USER

# new_repo DIR [N]: a repository with N (default 3) commits c1..cN on main,
# an hour apart (so "newest" is well defined).
new_repo() {
	local dir=$1 n=${2:-3} i
	git init -q "$dir" && for i in $(seq 1 "$n"); do
		GIT_COMMITTER_DATE="$((1700000000 + i * 3600)) +0000" \
			git -C "$dir" commit -q --allow-empty -m "c$i" || return 1
	done
}

# folded FILE [FUNC] [COUNT]: a folded-stack profile (no metadata).
folded() {
	printf 'main;%s %s\n' "${2:-work}" "${3:-10}" > "$1"
}

# run_file FILE KEY=VALUE...: a gzip pprof run file with testflame metadata,
# written by a third-party encoder (pprof-format).
run_file() {
	node "$TOP/tests/node/make-run-file.js" "$@"
}

# baseline_files REPO COMMIT: the paths in the baseline tree, one a line.
baseline_files() {
	git -C "$1" ls-tree -r --name-only "refs/testflame/runs/$(git -C "$1" rev-parse "$2")"
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# http_start: serve $SCRATCH/srv/*.git over smart HTTP at $HTTP_URL/NAME.git,
# everything behind basic auth. Users (htpasswd, apr1 hashes):
#   x-access-token : $HTTP_TOKEN      (TESTFLAME_TOKEN, GITHUB_TOKEN)
#   oauth2         : $HTTP_GL_TOKEN   (GITLAB_TOKEN)
HTTP_TOKEN=ghs_e2eSecretToken0123456789
HTTP_GL_TOKEN=glpat-e2eSecretToken98765
http_start() {
	local d=$SCRATCH/http try
	mkdir -p "$d/www" "$SCRATCH/srv"
	{
		echo "x-access-token:$(openssl passwd -apr1 "$HTTP_TOKEN")"
		echo "oauth2:$(openssl passwd -apr1 "$HTTP_GL_TOKEN")"
	} > "$d/htpasswd"
	for try in 1 2 3 4 5; do
		HTTP_PORT=$(free_port)
		cat > "$d/lighttpd.conf" <<-EOF
		server.document-root = "$d/www"
		server.bind = "127.0.0.1"
		server.port = $HTTP_PORT
		server.errorlog = "$d/error.log"
		server.modules = ( "mod_alias", "mod_setenv", "mod_auth", "mod_authn_file", "mod_cgi" )
		alias.url = ( "/git" => "/usr/lib/git-core/git-http-backend" )
		\$HTTP["url"] =~ "^/git" {
			cgi.assign = ( "" => "" )
			setenv.add-environment = ( "GIT_PROJECT_ROOT" => "$SCRATCH/srv", "GIT_HTTP_EXPORT_ALL" => "" )
			auth.backend = "htpasswd"
			auth.backend.htpasswd.userfile = "$d/htpasswd"
			auth.require = ( "" => ( "method" => "basic", "realm" => "git", "require" => "valid-user" ) )
		}
		EOF
		lighttpd -D -f "$d/lighttpd.conf" 2>>"$d/stderr" &
		HTTP_PID=$!
		for _ in $(seq 1 50); do
			if curl -s -o /dev/null "http://127.0.0.1:$HTTP_PORT/"; then
				HTTP_URL=http://127.0.0.1:$HTTP_PORT/git
				trap 'http_stop; rm -rf "$SCRATCH"' EXIT
				return 0
			fi
			kill -0 "$HTTP_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill "$HTTP_PID" 2>/dev/null
		wait "$HTTP_PID" 2>/dev/null
	done
	echo "lighttpd did not start:" >&2
	cat "$d/stderr" "$d/error.log" >&2 2>/dev/null
	return 1
}

http_stop() {
	if [ -n "${HTTP_PID:-}" ]; then
		kill "$HTTP_PID" 2>/dev/null
		wait "$HTTP_PID" 2>/dev/null
		HTTP_PID=
	fi
}

# barrier_hook BARE_REPO: a pre-receive hook that holds the first two pushes
# until both have arrived, so two jobs are sure to race for the same ref
# (both listed the remote before either updated it).
barrier_hook() {
	cat > "$1/hooks/pre-receive" <<-'EOF'
	#!/bin/sh
	cat >/dev/null
	d="$GIT_DIR/barrier"
	mkdir -p "$d"
	n=$(ls "$d" | wc -l)
	touch "$d/$$"
	if [ "$n" -lt 2 ]; then
		i=0
		while [ "$(ls "$d" | wc -l)" -lt 2 ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
	fi
	exit 0
	EOF
	chmod +x "$1/hooks/pre-receive"
}
