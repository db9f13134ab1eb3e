#!/usr/bin/env python3
# faultproxy.py - an HTTP proxy for the fault tests (t91xx): it forwards
# requests to a real server (lighttpd and git http-backend, lib-store.sh)
# and breaks the ones a fault file names, so that a remote goes away, hangs
# or fails in the middle of a push, while everything before goes through.
#
#   faultproxy.py UPSTREAM_PORT PORT_FILE FAULT_FILE LOG_FILE
#
# FAULT_FILE holds one line "MODE [PATTERN]" (re-read for every request;
# absent or "pass": forward everything). A request whose method and path
# contain PATTERN (default "POST /git/" with "git-receive-pack") gets:
#   drop   half of its body read, then the connection reset
#   stall  its body read, then no answer until the client gives up
#   500    its body read, then "500 Internal Server Error"
# Every request is answered with "Connection: close". LOG_FILE gets one
# line per request: "METHOD PATH -> what happened".
import os
import socket
import struct
import sys
import threading

upstream_port = int(sys.argv[1])
port_file, fault_file, log_file = sys.argv[2:5]
log_lock = threading.Lock()


def log(line):
    with log_lock:
        with open(log_file, "a") as f:
            f.write(line + "\n")


def fault():
    try:
        with open(fault_file) as f:
            parts = f.read().split(None, 1)
    except OSError:
        return "pass", None
    if not parts:
        return "pass", None
    return parts[0], parts[1].strip() if len(parts) > 1 else None


def read_head(sock, buf):
    while b"\r\n\r\n" not in buf:
        data = sock.recv(65536)
        if not data:
            return None, buf
        buf += data
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head, rest


def read_body(sock, head, rest, limit=None):
    """The request body (de-chunked), reading at most `limit` bytes."""
    lines = head.split(b"\r\n")
    headers = {}
    for l in lines[1:]:
        k, _, v = l.partition(b":")
        headers[k.strip().lower()] = v.strip()
    buf = rest
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        body = b""
        while True:
            while b"\r\n" not in buf:
                if limit is not None and len(buf) >= limit:
                    return body, True
                d = sock.recv(65536)
                if not d:
                    return body, True
                buf += d
            size_line, buf = buf.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            while len(buf) < size + 2:
                if limit is not None and len(body) + len(buf) >= limit:
                    return body + buf, True
                d = sock.recv(65536)
                if not d:
                    return body + buf, True
                buf += d
            body += buf[:size]
            buf = buf[size + 2:]
            if size == 0:
                return body, False
    n = int(headers.get(b"content-length", b"0"))
    want = n if limit is None else min(n, limit)
    while len(buf) < want:
        d = sock.recv(65536)
        if not d:
            break
        buf += d
    return buf[:n], limit is not None and want < n


def forward(head, body):
    lines = head.split(b"\r\n")
    out = [lines[0]]
    for l in lines[1:]:
        k = l.split(b":", 1)[0].strip().lower()
        if k in (b"connection", b"transfer-encoding", b"content-length", b"keep-alive"):
            continue
        out.append(l)
    out.append(b"Content-Length: %d" % len(body))
    out.append(b"Connection: close")
    up = socket.create_connection(("127.0.0.1", upstream_port))
    up.sendall(b"\r\n".join(out) + b"\r\n\r\n" + body)
    resp = b""
    while True:
        d = up.recv(65536)
        if not d:
            break
        resp += d
    up.close()
    # answer with "Connection: close" whatever upstream said
    h, _, rest = resp.partition(b"\r\n\r\n")
    hl = [l for l in h.split(b"\r\n") if not l.lower().startswith(b"connection:")]
    hl.append(b"Connection: close")
    return b"\r\n".join(hl) + b"\r\n\r\n" + rest


def reset(sock):
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def serve(conn):
    try:
        head, rest = read_head(conn, b"")
        if head is None:
            conn.close()
            return
        reqline = head.split(b"\r\n", 1)[0].decode("latin-1")
        method, path = reqline.split(" ")[:2]
        mode, pattern = fault()
        target = pattern is None and method == "POST" and "git-receive-pack" in path
        if pattern is not None:
            target = pattern in method + " " + path
        if mode == "pass" or not target:
            body, _ = read_body(conn, head, rest)
            conn.sendall(forward(head, body))
            conn.close()
            log("%s %s -> forwarded" % (method, path))
            return
        if mode == "drop":
            body, cut = read_body(conn, head, rest, limit=max(len(rest), 64) // 2 or 1)
            log("%s %s -> reset after %d bytes of its body" % (method, path, len(body)))
            reset(conn)
            return
        body, _ = read_body(conn, head, rest)
        if mode == "stall":
            log("%s %s -> stalled" % (method, path))
            conn.settimeout(300)
            while conn.recv(65536):
                pass
            log("%s %s -> the client gave up" % (method, path))
            conn.close()
            return
        if mode == "500":
            conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n"
                         b"Content-Length: 5\r\nConnection: close\r\n\r\nboom\n")
            conn.close()
            log("%s %s -> 500" % (method, path))
            return
        log("%s %s -> unknown mode %s" % (method, path, mode))
        reset(conn)
    except Exception as e:  # a client that went away
        log("error: %r" % (e,))
        try:
            conn.close()
        except OSError:
            pass


def main():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(s.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


main()
